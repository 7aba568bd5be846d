DROP TABLE wallet_exports;

DROP TABLE ledger;

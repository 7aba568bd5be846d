DROP TABLE wallets;

--bun:split

DROP TABLE api_keys;

--bun:split

DROP TABLE accounts;

DROP INDEX transactions_sponsored_day;

--bun:split

ALTER TABLE transactions DROP CONSTRAINT transactions_sponsored,
    DROP COLUMN sponsored_lamports, DROP COLUMN fee_payer;

--bun:split

DROP TABLE fee_payers;

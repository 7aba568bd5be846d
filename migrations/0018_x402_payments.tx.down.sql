DELETE FROM transactions WHERE kind = 'x402';

--bun:split

ALTER TABLE transactions DROP COLUMN resource, DROP CONSTRAINT transactions_kind_check,
    ADD CONSTRAINT transactions_kind_check CHECK (kind IN ('usdc'));

--bun:split

DROP TABLE x402_payments;

--bun:split

ALTER TABLE send_requests DROP COLUMN x402;

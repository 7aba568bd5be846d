ALTER TABLE x402_payments DROP COLUMN expiry_slot;

--bun:split

ALTER TABLE transactions DROP COLUMN expiry_slot;

DROP TABLE transaction_attempts;
ALTER TABLE transactions DROP COLUMN attempts;

ALTER TABLE transactions DROP COLUMN fee_lamports;

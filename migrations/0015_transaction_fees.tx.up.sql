-- The network fee a transaction pays when it lands (base fee and priority
-- fee on its requested compute units), in lamports; null for the rows
-- signed before fees were recorded.
ALTER TABLE transactions ADD COLUMN fee_lamports bigint CHECK (fee_lamports >= 0);

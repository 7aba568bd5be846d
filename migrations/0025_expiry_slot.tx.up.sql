-- The slot at which a payment's blockhash was first seen expired (its
-- block height past the last valid one, plus the sweep's margin): a node's
-- "not found" counts only from an answer at or past it, so a backend that
-- lags behind the landing never gets a landed payment signed again or
-- expired. Cleared when a payment is signed again (a new blockhash).

ALTER TABLE transactions ADD COLUMN expiry_slot bigint;

--bun:split

ALTER TABLE x402_payments ADD COLUMN expiry_slot bigint;

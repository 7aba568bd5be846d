DROP INDEX ledger_address_slot;

--bun:split

DROP INDEX deposits_unsettled;

--bun:split

ALTER TABLE deposits DROP COLUMN finalized_at;

--bun:split

ALTER TABLE unexplained_outflows DROP COLUMN counterparty;

--bun:split

DROP TABLE balance_snapshots;

-- A transaction the node refused at its first broadcast is never sent
-- again (refused_at), yet keeps its reservation against the day until its
-- blockhash has expired: a re-broadcast that read the row before the
-- refusal could otherwise still land it uncounted. signed_at is when it
-- was committed, on the database's clock, from which the sweep leaves it
-- to its worker's first broadcast for a grace.
ALTER TABLE transactions
    ADD COLUMN refused_at timestamptz,
    ADD COLUMN signed_at  timestamptz NOT NULL DEFAULT clock_timestamp();

--bun:split

UPDATE transactions SET signed_at = created_at;

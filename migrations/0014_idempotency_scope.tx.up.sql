-- An Idempotency-Key belongs to whoever used it: the key's rotation lineage
-- (key_<lineage>, so a rotated key keeps its predecessor's replays) or the
-- dashboard user (user:<address>). Unique per (account, key) let one agent
-- learn that another used a value, and squat it to fail the other's sends.
ALTER TABLE send_requests ADD COLUMN idempotency_scope text;

--bun:split

-- Requests made before the scope was recorded: a key's requests belong to
-- its lineage; the rest (dashboard sends, whose user was not recorded) to
-- no principal, so their values are released.
UPDATE send_requests SET idempotency_scope = coalesce('key_' || key_lineage::text, 'unrecorded')
    WHERE idempotency_key IS NOT NULL;

--bun:split

-- After the backfill: checked against the rows as they are then.
ALTER TABLE send_requests ADD CONSTRAINT send_requests_idempotency_scope
    CHECK (idempotency_key IS NULL OR idempotency_scope IS NOT NULL);

--bun:split

DROP INDEX send_requests_idempotency;

--bun:split

CREATE UNIQUE INDEX send_requests_idempotency ON send_requests (account_id, idempotency_scope, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state <> 'abandoned'
      AND (outcome IS NULL OR outcome ->> 'status' <> 'unavailable');

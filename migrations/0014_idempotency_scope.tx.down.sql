-- Going back to one key per account: keep the newest live request of each
-- (account, key) and release the others' keys.
UPDATE send_requests AS r SET idempotency_key = NULL
    WHERE r.idempotency_key IS NOT NULL AND r.state <> 'abandoned'
      AND (r.outcome IS NULL OR r.outcome ->> 'status' <> 'unavailable')
      AND EXISTS (SELECT 1 FROM send_requests AS n
          WHERE n.account_id = r.account_id AND n.idempotency_key = r.idempotency_key
            AND n.state <> 'abandoned' AND (n.outcome IS NULL OR n.outcome ->> 'status' <> 'unavailable')
            AND (n.created_at, n.id) > (r.created_at, r.id));

--bun:split

DROP INDEX send_requests_idempotency;

--bun:split

CREATE UNIQUE INDEX send_requests_idempotency ON send_requests (account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state <> 'abandoned'
      AND (outcome IS NULL OR outcome ->> 'status' <> 'unavailable');

--bun:split

ALTER TABLE send_requests DROP COLUMN idempotency_scope;

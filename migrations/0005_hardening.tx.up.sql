-- When a key was last used (to the minute: authentication refreshes it at
-- most once a minute, so a busy key does not write on every request), and
-- the key a rotation replaced it with.
ALTER TABLE api_keys
    ADD COLUMN last_used_at timestamptz,
    ADD COLUMN replaced_by  uuid REFERENCES api_keys (id);

--bun:split

-- Idempotency-Key of a send (docs/decisions/money-path.md, "Idempotency-Key").
-- One live request per (account, key): an abandoned request, or one whose node
-- could not be reached before anything was signed, released its key (it is
-- safe to retry with it). A key past its retention (24 hours; for a send
-- parked for approval, 24 hours after the approval is decided) is cleared by
-- the next request that reuses it.
ALTER TABLE send_requests
    ADD COLUMN idempotency_key text CHECK (char_length(idempotency_key) BETWEEN 1 AND 255);

--bun:split

CREATE UNIQUE INDEX send_requests_idempotency ON send_requests (account_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state <> 'abandoned'
      AND (outcome IS NULL OR outcome ->> 'status' <> 'unavailable');

--bun:split

-- GET /transactions?wallet_id=… newest first (keyset pagination).
CREATE INDEX transactions_wallet_newest ON transactions (wallet_id, created_at DESC, id DESC);

DROP INDEX transactions_wallet_newest;

--bun:split

DROP INDEX send_requests_idempotency;

--bun:split

ALTER TABLE send_requests DROP COLUMN idempotency_key;

--bun:split

ALTER TABLE api_keys DROP COLUMN replaced_by, DROP COLUMN last_used_at;

DROP INDEX approvals_wallet_newest;

--bun:split

DROP INDEX deliveries_endpoint_status;

--bun:split

DROP INDEX x402_payments_grant;

--bun:split

DROP INDEX approvals_request;

--bun:split

DROP STATISTICS send_requests_x402_protocol;

--bun:split

DROP INDEX send_requests_x402_wallet;

--bun:split

DROP INDEX send_requests_x402_newest;

--bun:split

DROP INDEX deposits_wallet_newest;

--bun:split

DROP INDEX deposits_account_status;

--bun:split

DROP INDEX deposits_account_asset;

--bun:split

DROP INDEX transactions_account_asset;

--bun:split

DROP INDEX transactions_account_status;

--bun:split

CREATE INDEX approvals_account_decided ON approvals (account_id, decided_at) WHERE decided_at IS NOT NULL;

--bun:split

DROP INDEX approvals_account_decided_outcome;

--bun:split

DROP TRIGGER analytics ON send_requests;

--bun:split

DROP TRIGGER analytics ON deposits;

--bun:split

DROP TRIGGER analytics ON x402_payments;

--bun:split

DROP TRIGGER analytics ON transactions;

--bun:split

DROP FUNCTION analytics_send_requests();

--bun:split

DROP FUNCTION analytics_deposits();

--bun:split

DROP FUNCTION analytics_x402();

--bun:split

DROP FUNCTION analytics_transactions();

--bun:split

DROP FUNCTION analytics_blocked(int, uuid, uuid, timestamptz, text);

--bun:split

DROP FUNCTION analytics_add(int, uuid, uuid, timestamptz, text, text, bigint, bigint);

--bun:split

DROP TABLE analytics_blocked_days;

--bun:split

DROP TABLE analytics_days;

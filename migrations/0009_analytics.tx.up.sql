-- Analytics aggregate an account's decisions over a range of days: these
-- keep each aggregate to the range's rows.
CREATE INDEX send_requests_account_decided ON send_requests (account_id, decided_at) WHERE state = 'decided';

--bun:split

CREATE INDEX approvals_account_decided ON approvals (account_id, decided_at) WHERE decided_at IS NOT NULL;

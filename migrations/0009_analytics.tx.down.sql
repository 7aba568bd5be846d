DROP INDEX approvals_account_decided;

--bun:split

DROP INDEX send_requests_account_decided;

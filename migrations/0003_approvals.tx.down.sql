ALTER TABLE api_keys DROP COLUMN created_by;

--bun:split

DROP INDEX approvals_account_status;

--bun:split

DROP INDEX audit_log_target;

--bun:split

DROP INDEX audit_log_action;

--bun:split

DROP INDEX approvals_signing;

--bun:split

ALTER TABLE approvals DROP COLUMN reason_detail, DROP COLUMN note, DROP COLUMN approved_by;

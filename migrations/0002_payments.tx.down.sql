DROP TABLE audit_log;

--bun:split

DROP FUNCTION audit_log_append_only();

--bun:split

DROP TABLE events;

--bun:split

DROP TABLE transactions;

--bun:split

DROP TABLE approvals;

--bun:split

DROP TABLE send_requests;

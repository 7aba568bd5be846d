DROP TABLE audit_log;

--bun:split

DROP FUNCTION audit_log_append_only();

--bun:split

DROP FUNCTION audit_append(uuid, uuid, timestamptz, text, text, text, json);

--bun:split

DROP FUNCTION audit_hash(bytea, uuid, uuid, bigint, timestamptz, text, text, text, json);

--bun:split

DROP TABLE events;

--bun:split

DROP TABLE transactions;

--bun:split

DROP TABLE approvals;

--bun:split

DROP TABLE send_requests;

-- The last verified link of each account's audit chain, so a verification
-- reads only the entries appended since, and the first break found, which
-- stays reported once found (internal/audit.Check). Like audit_log, only
-- the table's owner can change it behind the service's back; a full walk
-- (`api audit verify --full`) does not trust it.
CREATE TABLE audit_checkpoints (
    account_id    uuid PRIMARY KEY REFERENCES accounts (id),
    seq           bigint NOT NULL CHECK (seq >= 0),
    hash          bytea NOT NULL,
    verified_at   timestamptz NOT NULL,
    break_seq     bigint,
    break_entry   uuid,
    break_problem text,
    CHECK ((break_seq IS NULL) = (break_problem IS NULL))
);

ALTER TABLE users DROP COLUMN added_by, DROP COLUMN role_since;

--bun:split

DROP TABLE key_requests;

--bun:split

DROP INDEX wallet_exports_approved;

--bun:split

UPDATE wallet_exports SET state = 'pending', decided_by = NULL, decided_at = NULL WHERE state = 'approved';

--bun:split

UPDATE wallet_exports SET state = 'rejected' WHERE state = 'void';

--bun:split

ALTER TABLE wallet_exports DROP COLUMN sealed_at, DROP COLUMN void_reason;

--bun:split

ALTER TABLE wallet_exports DROP CONSTRAINT wallet_exports_state_check;

--bun:split

ALTER TABLE wallet_exports ADD CONSTRAINT wallet_exports_state_check
    CHECK (state IN ('pending', 'exported', 'rejected'));

-- What a worker does for the API with keys the API never holds is asked
-- here, in PostgreSQL, never decided by a message on Redis: Redis only
-- wakes a worker, which then reads these rows.

-- An export is approved by an owner (approved) and sealed by a worker
-- (exported); void when the owner who asked is no longer an owner, or the
-- approver no longer qualifies, before it was sealed.
ALTER TABLE wallet_exports DROP CONSTRAINT wallet_exports_state_check;

--bun:split

ALTER TABLE wallet_exports ADD CONSTRAINT wallet_exports_state_check
    CHECK (state IN ('pending', 'approved', 'exported', 'rejected', 'void'));

--bun:split

ALTER TABLE wallet_exports ADD COLUMN sealed_at timestamptz,
    ADD COLUMN void_reason text;

--bun:split

CREATE INDEX wallet_exports_approved ON wallet_exports (decided_at) WHERE state = 'approved';

--bun:split

-- A key the API asked a worker to make in an HSM or a KMS. The worker
-- writes the key it made into this row; the API takes the key from here,
-- so a reply forged on Redis makes no wallet.
CREATE TABLE key_requests (
    id           uuid PRIMARY KEY,
    backend      text NOT NULL,
    name         text NOT NULL,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'making', 'made', 'unavailable', 'failed')),
    requested_at timestamptz NOT NULL,
    deadline     timestamptz NOT NULL,
    claimed_at   timestamptz,
    done_at      timestamptz,
    public_key   bytea CHECK (public_key IS NULL OR length(public_key) = 32),
    ref          text,
    reason       text,
    CHECK ((state = 'made') = (public_key IS NOT NULL AND ref IS NOT NULL))
);

--bun:split

CREATE INDEX key_requests_pending ON key_requests (requested_at) WHERE state = 'pending';

--bun:split

-- Who added a user (an actor id: user:<address>, key:<id>, operator), and
-- since when it has its role: an export's approver must have been an
-- owner before the export was asked, and not added by the asker.
ALTER TABLE users ADD COLUMN added_by text,
    ADD COLUMN role_since timestamptz;

--bun:split

UPDATE users SET role_since = created_at;

--bun:split

ALTER TABLE users ALTER COLUMN role_since SET NOT NULL, ALTER COLUMN role_since SET DEFAULT now();

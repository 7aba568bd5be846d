-- Audit entries are written without a place in the chain and sealed into
-- it after their transaction commits (audit_seal, internal/audit.Seal).
-- Chaining inside the writing transaction held an account-wide lock until
-- its commit, so every decision of one account waited for the one before
-- it; sealing takes that lock only for the short seal.

ALTER TABLE audit_log
    ALTER COLUMN seq DROP NOT NULL,
    ALTER COLUMN prev_hash DROP NOT NULL,
    ALTER COLUMN hash DROP NOT NULL,
    ADD CONSTRAINT audit_log_sealed_whole
        CHECK ((seq IS NULL) = (prev_hash IS NULL) AND (seq IS NULL) = (hash IS NULL));

--bun:split

-- What waits to be sealed, in the order it is sealed.
CREATE INDEX audit_log_unsealed ON audit_log (account_id, at, id) WHERE seq IS NULL;

--bun:split

-- Appends an unsealed entry: no lock, no read of the chain's head.
CREATE OR REPLACE FUNCTION audit_append(p_id uuid, p_account uuid, p_at timestamptz, p_actor text, p_action text,
                                        p_target text, p_details json) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO audit_log (id, account_id, at, actor, action, target, details)
    VALUES (p_id, p_account, p_at, p_actor, p_action, p_target, p_details);
$$;

--bun:split

-- Seals the account's committed, unsealed entries onto its chain, oldest
-- first (by at, then id), and returns how many. The advisory lock (the one
-- audit_append used to hold to the commit) serializes one account's seals
-- for this statement's transaction only.
CREATE FUNCTION audit_seal(p_account uuid) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_seq  bigint;
    v_prev bytea;
    v_n    integer := 0;
    r      record;
BEGIN
    PERFORM pg_advisory_xact_lock(('x' || substr(replace(p_account::text, '-', ''), 1, 16))::bit(64)::bigint);
    SELECT seq, hash INTO v_seq, v_prev FROM audit_log
    WHERE account_id = p_account AND seq IS NOT NULL ORDER BY seq DESC LIMIT 1;
    IF NOT FOUND THEN
        v_seq := 0;
        v_prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;
    FOR r IN SELECT id, at, actor, action, target, details FROM audit_log
             WHERE account_id = p_account AND seq IS NULL ORDER BY at, id LOOP
        v_seq := v_seq + 1;
        UPDATE audit_log
        SET seq = v_seq, prev_hash = v_prev,
            hash = audit_hash(v_prev, r.id, p_account, v_seq, r.at, r.actor, r.action, r.target, r.details)
        WHERE id = r.id
        RETURNING hash INTO v_prev;
        v_n := v_n + 1;
    END LOOP;
    RETURN v_n;
END
$$;

--bun:split

-- Still append-only: the one change allowed is sealing an unsealed entry,
-- with the hash of its own fields, nothing else changed.
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL
        AND NEW.id = OLD.id AND NEW.account_id = OLD.account_id AND NEW.at = OLD.at
        AND NEW.actor = OLD.actor AND NEW.action = OLD.action AND NEW.target = OLD.target
        AND NEW.details::text = OLD.details::text
        AND NEW.hash = audit_hash(NEW.prev_hash, NEW.id, NEW.account_id, NEW.seq, NEW.at,
                                  NEW.actor, NEW.action, NEW.target, NEW.details) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only';
END
$$;

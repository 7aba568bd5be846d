-- Seals what is left, then chains inside the writing transaction again.

SELECT audit_seal(account_id) FROM (SELECT DISTINCT account_id FROM audit_log WHERE seq IS NULL) AS unsealed;

--bun:split

CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END
$$;

--bun:split

DROP FUNCTION audit_seal(uuid);

--bun:split

CREATE OR REPLACE FUNCTION audit_append(p_id uuid, p_account uuid, p_at timestamptz, p_actor text, p_action text,
                                        p_target text, p_details json) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_seq  bigint;
    v_prev bytea;
BEGIN
    PERFORM pg_advisory_xact_lock(('x' || substr(replace(p_account::text, '-', ''), 1, 16))::bit(64)::bigint);
    SELECT seq, hash INTO v_seq, v_prev FROM audit_log WHERE account_id = p_account ORDER BY seq DESC LIMIT 1;
    IF NOT FOUND THEN
        v_seq := 0;
        v_prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
    END IF;
    INSERT INTO audit_log (id, account_id, seq, at, actor, action, target, details, prev_hash, hash)
    VALUES (p_id, p_account, v_seq + 1, p_at, p_actor, p_action, p_target, p_details, v_prev,
            audit_hash(v_prev, p_id, p_account, v_seq + 1, p_at, p_actor, p_action, p_target, p_details));
END
$$;

--bun:split

DROP INDEX audit_log_unsealed;

--bun:split

ALTER TABLE audit_log
    DROP CONSTRAINT audit_log_sealed_whole,
    ALTER COLUMN seq SET NOT NULL,
    ALTER COLUMN prev_hash SET NOT NULL,
    ALTER COLUMN hash SET NOT NULL;

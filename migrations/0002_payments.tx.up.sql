-- A send as the API received it. The API inserts it `queued`; exactly one
-- of the worker (`queued → decided`) and the API's timeout (`queued →
-- abandoned`) wins the conditional UPDATE, so a payment the client was told
-- failed can never go out. Past `deadline` (database clock) a worker
-- abandons instead of deciding. `outcome` is the answer once it is final.
CREATE TABLE send_requests (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    wallet_id     uuid NOT NULL REFERENCES wallets (id),
    key_id        uuid REFERENCES api_keys (id),
    network       text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    to_address    text NOT NULL,
    amount_micros bigint NOT NULL CHECK (amount_micros > 0),
    memo          text CHECK (char_length(memo) <= 200),
    state         text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'decided', 'abandoned')),
    outcome       jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    deadline      timestamptz NOT NULL,
    decided_at    timestamptz
);

--bun:split

-- A payment parked for a human (its lifecycle: docs/decisions/approvals.md).
-- It reserves nothing against the daily limit until approved.
CREATE TABLE approvals (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    wallet_id     uuid NOT NULL REFERENCES wallets (id),
    request_id    uuid UNIQUE REFERENCES send_requests (id),
    requested_by  uuid REFERENCES api_keys (id),
    amount_micros bigint NOT NULL CHECK (amount_micros > 0),
    to_address    text NOT NULL,
    memo          text,
    status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'signing', 'sent', 'rejected', 'expired')),
    reason        text,
    signature     text,
    rejected_by   text,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    decided_at    timestamptz
);

--bun:split

CREATE INDEX approvals_account_newest ON approvals (account_id, created_at DESC, id DESC);

--bun:split

CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE status = 'pending';

--bun:split

-- An on-chain transfer. The signed bytes are stored before the first
-- broadcast so the same transaction (never a second one) is re-broadcast
-- until it lands or its blockhash expires. A pending or confirmed row
-- reserves its amount against the wallet's daily limit; failed releases it.
CREATE TABLE transactions (
    id                      uuid PRIMARY KEY,
    account_id              uuid NOT NULL REFERENCES accounts (id),
    wallet_id               uuid NOT NULL REFERENCES wallets (id),
    request_id              uuid UNIQUE REFERENCES send_requests (id),
    approval_id             uuid UNIQUE REFERENCES approvals (id),
    network                 text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    signature               text NOT NULL UNIQUE,
    kind                    text NOT NULL DEFAULT 'usdc' CHECK (kind IN ('usdc')),
    direction               text NOT NULL DEFAULT 'send' CHECK (direction IN ('send')),
    amount_micros           bigint NOT NULL CHECK (amount_micros > 0),
    counterparty            text NOT NULL,
    memo                    text,
    status                  text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'failed')),
    error                   text,
    signed_tx               bytea NOT NULL,
    last_valid_block_height bigint NOT NULL,
    broadcasts              integer NOT NULL DEFAULT 0,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL
);

--bun:split

CREATE INDEX transactions_account_newest ON transactions (account_id, created_at DESC, id DESC);

--bun:split

-- The day's reserved total of a wallet reads only this index.
CREATE INDEX transactions_wallet_reserved ON transactions (wallet_id, created_at) INCLUDE (amount_micros)
    WHERE status IN ('pending', 'confirmed');

--bun:split

CREATE INDEX transactions_pending ON transactions (created_at) WHERE status = 'pending';

--bun:split

-- The outbox: every state change inserts its event in the same commit.
CREATE TABLE events (
    id         uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id),
    kind       text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL
);

--bun:split

CREATE INDEX events_account_newest ON events (account_id, created_at DESC, id DESC);

--bun:split

-- Append-only, hash-chained per account: hash = SHA-256 over prev_hash and
-- the entry's fields (internal/audit). `details` is json, not jsonb, so the
-- stored text is exactly the hashed text.
CREATE TABLE audit_log (
    id         uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id),
    seq        bigint NOT NULL CHECK (seq > 0),
    at         timestamptz NOT NULL,
    actor      text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL,
    details    json NOT NULL,
    prev_hash  bytea NOT NULL,
    hash       bytea NOT NULL,
    UNIQUE (account_id, seq)
);

--bun:split

-- The entry hash: SHA-256 over each field, length-prefixed (8 bytes, big
-- endian) so no two entries encode alike. internal/audit computes the same.
CREATE FUNCTION audit_hash(prev bytea, id uuid, account uuid, seq bigint, at timestamptz,
                           actor text, action text, target text, details json) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(
        int8send(octet_length(prev)) || prev ||
        int8send(36) || convert_to(id::text, 'UTF8') ||
        int8send(36) || convert_to(account::text, 'UTF8') ||
        int8send(8) || int8send(seq) ||
        int8send(8) || int8send((extract(epoch FROM at) * 1000000)::bigint) ||
        int8send(octet_length(convert_to(actor, 'UTF8'))) || convert_to(actor, 'UTF8') ||
        int8send(octet_length(convert_to(action, 'UTF8'))) || convert_to(action, 'UTF8') ||
        int8send(octet_length(convert_to(target, 'UTF8'))) || convert_to(target, 'UTF8') ||
        int8send(octet_length(convert_to(details::text, 'UTF8'))) || convert_to(details::text, 'UTF8'))
$$;

--bun:split

-- Appends to the account's chain in one round trip. The advisory lock
-- serializes one account's appends until the caller's transaction ends;
-- the head is read after it is held.
CREATE FUNCTION audit_append(p_id uuid, p_account uuid, p_at timestamptz, p_actor text, p_action text,
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

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END
$$;

--bun:split

CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

--bun:split

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

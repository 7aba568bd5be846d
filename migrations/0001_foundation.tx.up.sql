CREATE TABLE accounts (
    id         uuid PRIMARY KEY,
    network    text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    created_at timestamptz NOT NULL DEFAULT now()
);

--bun:split

-- API keys are stored only as a SHA-256 hash plus a short display prefix.
CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    account_id uuid NOT NULL REFERENCES accounts (id),
    prefix     text NOT NULL,
    hash       bytea NOT NULL UNIQUE CHECK (octet_length(hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

--bun:split

CREATE INDEX api_keys_account ON api_keys (account_id);

--bun:split

-- Policy amounts are integer micro-USDC. The wallet secret is sealed to the
-- worker's master key (see internal/signer); key_id names that key.
CREATE TABLE wallets (
    id                        uuid PRIMARY KEY,
    account_id                uuid NOT NULL REFERENCES accounts (id),
    kind                      text NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent')),
    label                     text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
    pubkey                    text NOT NULL UNIQUE,
    state                     text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'frozen')),
    daily_limit_micros        bigint NOT NULL CHECK (daily_limit_micros >= 0),
    max_tx_micros             bigint NOT NULL CHECK (max_tx_micros >= 0),
    approval_threshold_micros bigint NOT NULL CHECK (approval_threshold_micros >= 0),
    allowlist                 text[] NOT NULL DEFAULT '{}',
    secret_key_id             text NOT NULL,
    secret_sealed             bytea NOT NULL,
    created_at                timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE INDEX wallets_account_newest ON wallets (account_id, created_at DESC, id DESC);

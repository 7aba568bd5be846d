-- Dashboard users: a Solana address with a role in an account. One address
-- may belong to several accounts (a devnet and a mainnet one, say).
CREATE TABLE users (
    account_id uuid NOT NULL REFERENCES accounts (id),
    address    text NOT NULL CHECK (char_length(address) BETWEEN 32 AND 44),
    role       text NOT NULL CHECK (role IN ('owner', 'approver', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, address)
);

--bun:split

CREATE INDEX users_address ON users (address);

--bun:split

-- Dashboard sessions after Sign-In With Solana: only a hash of the cookie's
-- token is stored (like API keys). A session acts in one of its address's
-- accounts at a time (account_id), with the role the address has there now.
CREATE TABLE sessions (
    id           uuid PRIMARY KEY,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    address      text NOT NULL,
    account_id   uuid NOT NULL REFERENCES accounts (id),
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    ended_at     timestamptz
);

--bun:split

CREATE INDEX sessions_address ON sessions (address);

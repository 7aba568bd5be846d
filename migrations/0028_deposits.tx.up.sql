-- Money coming in. A deposit is a confirmed transaction that raised an
-- agent wallet's USDC (any of its token accounts of the network's USDC
-- mint) or its SOL, made by anyone but the wallet itself; amount is in the
-- asset's base units (micro-USDC, lamports). One row per wallet,
-- signature and asset: a deposit is recorded, and announced, once.
-- Deposits live apart from transactions, so no spend limit, reservation
-- or fee budget can ever count one.
CREATE TABLE deposits (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    wallet_id     uuid NOT NULL REFERENCES wallets (id),
    network       text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    signature     text NOT NULL,
    asset         text NOT NULL CHECK (asset IN ('usdc', 'sol')),
    amount        bigint NOT NULL CHECK (amount > 0),
    counterparty  text NOT NULL,
    slot          bigint NOT NULL,
    status        text NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'failed')),
    created_at    timestamptz NOT NULL,
    UNIQUE (wallet_id, signature, asset)
);

--bun:split

CREATE INDEX deposits_account_newest ON deposits (account_id, created_at DESC, id DESC);

--bun:split

-- The accounts the watcher reads: each wallet's address (its SOL) and its
-- USDC token accounts. balance is the last amount read (lamports or base
-- units); last_signature the newest transaction of the account already
-- examined, from which the next examination resumes (a restart, a node's
-- failover or an hour away resumes there: nothing is missed, nothing is
-- counted twice). Transactions before since are history, not deposits.
CREATE TABLE watched_accounts (
    address         text NOT NULL,
    network         text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    wallet_id       uuid NOT NULL REFERENCES wallets (id),
    asset           text NOT NULL CHECK (asset IN ('usdc', 'sol')),
    balance         bigint,
    last_signature  text,
    since           timestamptz NOT NULL,
    checked_at      timestamptz,
    PRIMARY KEY (network, address)
);

--bun:split

CREATE INDEX watched_accounts_wallet ON watched_accounts (wallet_id, asset);

--bun:split

-- When each wallet's token accounts were last listed (an account made
-- for the wallet by someone else is found at the next listing).
ALTER TABLE wallets ADD COLUMN token_accounts_listed_at timestamptz;

--bun:split

-- Wallets made before deposits were watched: their past is history.
INSERT INTO watched_accounts (address, network, wallet_id, asset, since)
SELECT w.pubkey, a.network, w.id, 'sol', now() FROM wallets w JOIN accounts a ON a.id = w.account_id;

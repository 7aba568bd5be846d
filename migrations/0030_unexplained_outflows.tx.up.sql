-- Money that left a wallet in a transaction the service did not make: its
-- signature is none of our payments' (a send's, an earlier attempt's, an
-- x402 payment's). Someone holding the wallet's key outside the service,
-- or a delegate: recorded once and announced (wallet.unexplained_outflow).
CREATE TABLE unexplained_outflows (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    wallet_id     uuid NOT NULL REFERENCES wallets (id),
    network       text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    signature     text NOT NULL,
    asset         text NOT NULL CHECK (asset IN ('usdc', 'sol')),
    amount        bigint NOT NULL CHECK (amount > 0),
    slot          bigint NOT NULL,
    created_at    timestamptz NOT NULL,
    UNIQUE (wallet_id, signature, asset)
);

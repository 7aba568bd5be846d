-- Every balance change of a watched account, read from the transaction
-- that made it (the account's balance after it): sends with their fees
-- and any rent, deposits, x402 payments, anything that touched it. The
-- deposit watcher writes it in the same commit as the account's cursor;
-- id orders an account's changes as the chain did.
CREATE TABLE ledger (
    id         bigserial PRIMARY KEY,
    network    text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    address    text NOT NULL,
    signature  text NOT NULL,
    wallet_id  uuid NOT NULL REFERENCES wallets (id),
    asset      text NOT NULL CHECK (asset IN ('usdc', 'sol')),
    slot       bigint NOT NULL,
    at         timestamptz NOT NULL,
    balance    bigint NOT NULL,
    UNIQUE (network, address, signature)
);

--bun:split

CREATE INDEX ledger_wallet_at ON ledger (wallet_id, asset, address, at, id);

-- A wallet's balance read on chain, checked against its ledger at the
-- same slot: chain and ledger in the asset's base units, summed over the
-- wallet's accounts of the asset. chain <> ledger is money that moved in
-- a way no transaction read by the watcher shows; it is recorded here,
-- announced (wallet.balance_mismatch) and the ledger takes the chain's
-- balance from then on (a ledger row whose signature is snapshot:<id>).
CREATE TABLE balance_snapshots (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id),
    wallet_id   uuid NOT NULL REFERENCES wallets (id),
    network     text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    asset       text NOT NULL CHECK (asset IN ('usdc', 'sol')),
    slot        bigint NOT NULL,
    chain       bigint NOT NULL,
    ledger      bigint NOT NULL,
    taken_at    timestamptz NOT NULL
);

--bun:split

CREATE INDEX balance_snapshots_wallet ON balance_snapshots (wallet_id, taken_at DESC, id DESC);

--bun:split

CREATE INDEX balance_snapshots_differences ON balance_snapshots (wallet_id, taken_at DESC, id DESC) WHERE chain <> ledger;

--bun:split

-- Who got the money that left in a transaction the service did not make.
ALTER TABLE unexplained_outflows ADD COLUMN counterparty text;

--bun:split

-- When a deposit's transaction was seen finalized: no fork can drop it
-- any more. Until then the watcher asks after it; one the chain no
-- longer knows once its blockhash has expired is failed.
ALTER TABLE deposits ADD COLUMN finalized_at timestamptz;

--bun:split

CREATE INDEX deposits_unsettled ON deposits (network, slot) WHERE status = 'confirmed' AND finalized_at IS NULL;

--bun:split

-- An account's balance at a slot (the snapshot's comparison).
CREATE INDEX ledger_address_slot ON ledger (network, address, slot DESC, id DESC);

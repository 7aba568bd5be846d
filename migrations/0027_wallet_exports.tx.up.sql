-- An owner's request to export an envelope wallet's secret, sealed (HPKE)
-- to the X25519 public key the owner supplies (recipient). Another owner
-- approves it; a worker then seals the secret to the recipient (sealed),
-- and the wallet is marked exported for good (wallets.exported_at).
CREATE TABLE wallet_exports (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    wallet_id     uuid NOT NULL REFERENCES wallets (id),
    recipient     bytea NOT NULL CHECK (length(recipient) = 32),
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'exported', 'rejected')),
    requested_by  text NOT NULL,
    requested_at  timestamptz NOT NULL,
    decided_by    text,
    decided_at    timestamptz,
    sealed        bytea,
    CHECK ((state = 'exported') = (sealed IS NOT NULL)),
    CHECK ((state = 'pending') = (decided_at IS NULL))
);

--bun:split

CREATE INDEX wallet_exports_wallet ON wallet_exports (wallet_id, requested_at DESC);

-- An account's fee payer: a wallet of the service that pays the network fee
-- and the rent of created token accounts of its agent wallets' sends. It is
-- not an agent wallet (no row in wallets, so no API route can spend from
-- it); its secret is sealed like theirs and opened only by the worker. The
-- keypair is made the first time it is enabled; before, the row holds only
-- the budget. Sends of the account lock this row while they are signed, so
-- the day's spend is counted under one lock.
CREATE TABLE fee_payers (
    account_id            uuid PRIMARY KEY REFERENCES accounts (id),
    enabled               boolean NOT NULL DEFAULT false,
    daily_budget_lamports bigint NOT NULL CHECK (daily_budget_lamports > 0),
    pubkey                text UNIQUE,
    secret_key_id         text,
    secret_sealed         bytea,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CHECK ((pubkey IS NULL) = (secret_sealed IS NULL) AND (pubkey IS NULL) = (secret_key_id IS NULL)),
    CHECK (NOT enabled OR pubkey IS NOT NULL)
);

--bun:split

-- The fee payer that signed a transaction (null: the wallet paid its own
-- fee) and the lamports it pays if the transaction lands: the fee and the
-- rent of the recipient's token account when the transfer may create it.
-- The day's sum is what the fee payer's budget is checked against.
ALTER TABLE transactions ADD COLUMN fee_payer text,
    ADD COLUMN sponsored_lamports bigint CHECK (sponsored_lamports >= 0),
    ADD CONSTRAINT transactions_sponsored CHECK ((fee_payer IS NULL) = (sponsored_lamports IS NULL));

--bun:split

CREATE INDEX transactions_sponsored_day ON transactions (account_id, signed_at) WHERE fee_payer IS NOT NULL;

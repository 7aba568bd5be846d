-- x402 payments. A pay request rides the send path: its
-- send_requests row carries the x402 part (the seller's challenge as sent,
-- the chosen entry, the caller's cap and the resource), so idempotency,
-- the wallet lock, the policy, approvals and the wait are the send's.
ALTER TABLE send_requests ADD COLUMN x402 jsonb;

--bun:split

-- A signed x402 payment. Its id on chain is the seller's fee payer's
-- signature, unknown when we sign: the worker finds the landed transaction
-- by the wallet's signature (owner_signature) among the wallet's token
-- account's transactions. While signed it reserves its amount in the
-- wallet's daily limit (payment.ReservedToday); settled, the reservation
-- is its confirmed transactions row (kind x402); expired, nothing.
CREATE TABLE x402_payments (
    id                      uuid PRIMARY KEY,
    account_id              uuid NOT NULL REFERENCES accounts (id),
    wallet_id               uuid NOT NULL REFERENCES wallets (id),
    request_id              uuid NOT NULL UNIQUE REFERENCES send_requests (id),
    -- The approval granted and redeemed by this payment: once.
    approval_id             uuid UNIQUE REFERENCES approvals (id),
    network                 text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
    x402_version            integer NOT NULL CHECK (x402_version IN (1, 2)),
    challenge               jsonb NOT NULL,
    choice_index            integer NOT NULL CHECK (choice_index >= 0),
    amount_micros           bigint NOT NULL CHECK (amount_micros > 0),
    pay_to                  text NOT NULL,
    asset                   text NOT NULL,
    fee_payer               text NOT NULL,
    resource                text NOT NULL,
    description             text,
    memo                    text NOT NULL,
    owner_signature         text NOT NULL UNIQUE,
    source_ata              text NOT NULL,
    destination_ata         text NOT NULL,
    header                  text NOT NULL,
    payment_signature       text NOT NULL,
    signed_tx               bytea NOT NULL,
    last_valid_block_height bigint NOT NULL,
    state                   text NOT NULL CHECK (state IN ('signed', 'settled', 'expired', 'failed')),
    error                   text,
    signature               text UNIQUE,
    transaction_id          uuid UNIQUE REFERENCES transactions (id),
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    -- Where the search for it on chain goes on, once it can no longer
    -- land, and when it was last searched for (the sweep's order).
    search_before           text,
    checked_at              timestamptz,
    CHECK ((state = 'settled') = (signature IS NOT NULL AND transaction_id IS NOT NULL))
);

--bun:split

CREATE INDEX x402_payments_account_newest ON x402_payments (account_id, created_at DESC, id DESC);

--bun:split

-- The day's reservations of signed payments (payment.ReservedToday) and the sweep's work.
CREATE INDEX x402_payments_signed ON x402_payments (wallet_id, created_at) INCLUDE (amount_micros)
    WHERE state = 'signed';

--bun:split

-- A landed x402 payment is a transaction of kind x402 with its resource.
ALTER TABLE transactions DROP CONSTRAINT transactions_kind_check,
    ADD CONSTRAINT transactions_kind_check CHECK (kind IN ('usdc', 'x402')),
    ADD COLUMN resource text;

-- A payment whose transaction expired unseen is signed again (a fresh
-- blockhash and fee) on the same row: the row's signature, signed_tx,
-- last_valid_block_height and fee_lamports are the current attempt's,
-- attempts counts them, and each superseded attempt is kept here so its
-- signature stays findable.
ALTER TABLE transactions ADD COLUMN attempts integer NOT NULL DEFAULT 1 CHECK (attempts >= 1);

CREATE TABLE transaction_attempts (
    transaction_id          uuid        NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    attempt                 integer     NOT NULL CHECK (attempt >= 1),
    signature               text        NOT NULL,
    last_valid_block_height bigint      NOT NULL,
    fee_lamports            bigint      CHECK (fee_lamports >= 0),
    -- Why it was superseded: 'expired' (its blockhash expired and no node
    -- knew it, so it can never land).
    outcome                 text        NOT NULL CHECK (outcome IN ('expired')),
    signed_at               timestamptz NOT NULL,
    ended_at                timestamptz NOT NULL,
    PRIMARY KEY (transaction_id, attempt)
);
CREATE UNIQUE INDEX transaction_attempts_signature ON transaction_attempts (signature);

-- Payments of the Machine Payments Protocol's Solana charge. Like an x402
-- payment, the wallet signs a transaction the seller broadcasts (pull
-- mode), so it is found on chain, reserved and settled the same way: it
-- is a row of x402_payments (the table of payments handed to a seller)
-- with protocol 'mpp'. Its pay request's send_requests.x402 names the
-- protocol too.
ALTER TABLE x402_payments
    ADD COLUMN protocol text NOT NULL DEFAULT 'x402' CHECK (protocol IN ('x402', 'mpp')),
    -- The challenge's id (its HMAC: unique to what the seller asked and
    -- when it expires), its expiry, the split recipients, and the seller's
    -- Payment-Receipt once the agent reports it.
    ADD COLUMN challenge_id text,
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN splits jsonb,
    ADD COLUMN receipt jsonb,
    DROP CONSTRAINT x402_payments_x402_version_check,
    ADD CONSTRAINT x402_payments_version_check CHECK (
        (protocol = 'x402' AND x402_version IN (1, 2) AND challenge_id IS NULL)
        OR (protocol = 'mpp' AND x402_version = 0 AND challenge_id IS NOT NULL AND expires_at IS NOT NULL));

--bun:split

-- A challenge is paid once per account: the official server keeps no
-- record of the challenges it was paid for, so a second payment of the
-- same challenge would be taken.
CREATE UNIQUE INDEX x402_payments_mpp_challenge ON x402_payments (account_id, challenge_id) WHERE protocol = 'mpp';

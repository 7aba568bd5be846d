-- MPP payments have no place in the older schema: rather than drop them,
-- the rollback refuses.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM x402_payments WHERE protocol <> 'x402') THEN
        RAISE EXCEPTION 'MPP payments exist: this schema cannot hold them';
    END IF;
END
$$;

--bun:split

DROP INDEX x402_payments_mpp_challenge;

--bun:split

ALTER TABLE x402_payments
    DROP CONSTRAINT x402_payments_version_check,
    DROP COLUMN protocol,
    DROP COLUMN challenge_id,
    DROP COLUMN expires_at,
    DROP COLUMN splits,
    DROP COLUMN receipt,
    ADD CONSTRAINT x402_payments_x402_version_check CHECK (x402_version IN (1, 2));

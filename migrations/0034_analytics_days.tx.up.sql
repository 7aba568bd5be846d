-- What analytics sums, summed per account, UTC day and wallet by
-- triggers, so a year of analytics reads one row per wallet and day that
-- had any, not every payment of the year (internal/analytics.Compute).
-- What counts is what Compute counted from the payments themselves:
--   n, usd_micros, eur_micros   transactions not failed, and x402/MPP
--                               payments signed (not yet settled), by
--                               created_at: how many, and their amount by
--                               currency
--   x402_n, x402_micros,        the same rows of that kind: how many, and
--   mpp_n, mpp_micros           their amount in USD
--   fee_lamports                fees of confirmed transactions
--   usdc_in_n, usdc_in,         confirmed deposits, by created_at (the
--   sol_in_n, sol_in            deposits table holds only these assets)
-- and analytics_blocked_days the sends the policy blocked, by decided_at.

CREATE TABLE analytics_days (
    -- No foreign keys: their checks would take share locks on the wallet
    -- a decision holds for update, as wallet_usage_hours explains.
    account_id   uuid   NOT NULL,
    day          date   NOT NULL,
    wallet_id    uuid   NOT NULL,
    n            bigint NOT NULL DEFAULT 0,
    usd_micros   bigint NOT NULL DEFAULT 0,
    eur_micros   bigint NOT NULL DEFAULT 0,
    fee_lamports bigint NOT NULL DEFAULT 0,
    x402_n       bigint NOT NULL DEFAULT 0,
    x402_micros  bigint NOT NULL DEFAULT 0,
    mpp_n        bigint NOT NULL DEFAULT 0,
    mpp_micros   bigint NOT NULL DEFAULT 0,
    usdc_in_n    bigint NOT NULL DEFAULT 0,
    usdc_in      bigint NOT NULL DEFAULT 0,
    sol_in_n     bigint NOT NULL DEFAULT 0,
    sol_in       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, wallet_id)
);

--bun:split

CREATE TABLE analytics_blocked_days (
    account_id uuid   NOT NULL,
    day        date   NOT NULL,
    wallet_id  uuid   NOT NULL,
    reason     text   NOT NULL,
    n          bigint NOT NULL,
    PRIMARY KEY (account_id, day, wallet_id, reason) INCLUDE (n)
);

--bun:split

-- Adds a row's part (sign 1) or takes it out (sign -1). kind is a
-- payment's (usdc for a send, x402, mpp) or deposit for money in.
CREATE FUNCTION analytics_add(sign int, p_account uuid, p_wallet uuid, p_at timestamptz, kind text,
                              currency text, amount bigint, fee bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    pay boolean := kind <> 'deposit';
BEGIN
    INSERT INTO analytics_days AS d (account_id, day, wallet_id, n, usd_micros, eur_micros, fee_lamports,
                                     x402_n, x402_micros, mpp_n, mpp_micros, usdc_in_n, usdc_in, sol_in_n, sol_in)
    VALUES (p_account, (p_at AT TIME ZONE 'UTC')::date, p_wallet,
            CASE WHEN pay THEN sign ELSE 0 END,
            CASE WHEN pay AND currency = 'USD' THEN sign * amount ELSE 0 END,
            CASE WHEN pay AND currency = 'EUR' THEN sign * amount ELSE 0 END,
            sign * coalesce(fee, 0),
            CASE WHEN kind = 'x402' THEN sign ELSE 0 END,
            CASE WHEN kind = 'x402' AND currency = 'USD' THEN sign * amount ELSE 0 END,
            CASE WHEN kind = 'mpp' THEN sign ELSE 0 END,
            CASE WHEN kind = 'mpp' AND currency = 'USD' THEN sign * amount ELSE 0 END,
            CASE WHEN NOT pay AND currency = 'usdc' THEN sign ELSE 0 END,
            CASE WHEN NOT pay AND currency = 'usdc' THEN sign * amount ELSE 0 END,
            CASE WHEN NOT pay AND currency = 'sol' THEN sign ELSE 0 END,
            CASE WHEN NOT pay AND currency = 'sol' THEN sign * amount ELSE 0 END)
    ON CONFLICT (account_id, day, wallet_id) DO UPDATE SET
        n = d.n + excluded.n, usd_micros = d.usd_micros + excluded.usd_micros, eur_micros = d.eur_micros + excluded.eur_micros,
        fee_lamports = d.fee_lamports + excluded.fee_lamports,
        x402_n = d.x402_n + excluded.x402_n, x402_micros = d.x402_micros + excluded.x402_micros,
        mpp_n = d.mpp_n + excluded.mpp_n, mpp_micros = d.mpp_micros + excluded.mpp_micros,
        usdc_in_n = d.usdc_in_n + excluded.usdc_in_n, usdc_in = d.usdc_in + excluded.usdc_in,
        sol_in_n = d.sol_in_n + excluded.sol_in_n, sol_in = d.sol_in + excluded.sol_in;
END
$$;

--bun:split

CREATE FUNCTION analytics_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (OLD.status = 'failed') = (NEW.status = 'failed')
       AND OLD.account_id = NEW.account_id AND OLD.wallet_id = NEW.wallet_id AND OLD.created_at = NEW.created_at
       AND OLD.currency = NEW.currency AND OLD.kind = NEW.kind AND OLD.amount_micros = NEW.amount_micros
       AND (CASE WHEN OLD.status = 'confirmed' THEN OLD.fee_lamports END) IS NOT DISTINCT FROM
           (CASE WHEN NEW.status = 'confirmed' THEN NEW.fee_lamports END) THEN
        RETURN NULL; -- nothing counted changed (a pending transaction broadcast again, say)
    END IF;
    IF TG_OP <> 'INSERT' AND OLD.status <> 'failed' THEN
        PERFORM analytics_add(-1, OLD.account_id, OLD.wallet_id, OLD.created_at, OLD.kind, OLD.currency, OLD.amount_micros,
                              CASE WHEN OLD.status = 'confirmed' THEN OLD.fee_lamports END);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status <> 'failed' THEN
        PERFORM analytics_add(1, NEW.account_id, NEW.wallet_id, NEW.created_at, NEW.kind, NEW.currency, NEW.amount_micros,
                              CASE WHEN NEW.status = 'confirmed' THEN NEW.fee_lamports END);
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION analytics_x402() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.state = 'signed' THEN
        PERFORM analytics_add(-1, OLD.account_id, OLD.wallet_id, OLD.created_at, OLD.protocol, OLD.currency, OLD.amount_micros, NULL);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.state = 'signed' THEN
        PERFORM analytics_add(1, NEW.account_id, NEW.wallet_id, NEW.created_at, NEW.protocol, NEW.currency, NEW.amount_micros, NULL);
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION analytics_deposits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.status = 'confirmed' THEN
        PERFORM analytics_add(-1, OLD.account_id, OLD.wallet_id, OLD.created_at, 'deposit', OLD.asset, OLD.amount, NULL);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status = 'confirmed' THEN
        PERFORM analytics_add(1, NEW.account_id, NEW.wallet_id, NEW.created_at, 'deposit', NEW.asset, NEW.amount, NULL);
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION analytics_blocked(sign int, p_account uuid, p_wallet uuid, p_at timestamptz, p_reason text) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO analytics_blocked_days AS b (account_id, day, wallet_id, reason, n)
    VALUES (p_account, (p_at AT TIME ZONE 'UTC')::date, p_wallet, coalesce(p_reason, ''), sign)
    ON CONFLICT (account_id, day, wallet_id, reason) DO UPDATE SET n = b.n + excluded.n
$$;

--bun:split

CREATE FUNCTION analytics_send_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.state = 'decided' AND OLD.outcome ->> 'status' = 'blocked' THEN
        PERFORM analytics_blocked(-1, OLD.account_id, OLD.wallet_id, OLD.decided_at, OLD.outcome ->> 'reason');
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.state = 'decided' AND NEW.outcome ->> 'status' = 'blocked' THEN
        PERFORM analytics_blocked(1, NEW.account_id, NEW.wallet_id, NEW.decided_at, NEW.outcome ->> 'reason');
    END IF;
    RETURN NULL;
END
$$;

--bun:split

-- The triggers first: creating them waits for the writers under way and
-- holds new ones until this migration commits, so the sums below see
-- every row, and every later change goes through a trigger.
CREATE TRIGGER analytics AFTER INSERT OR DELETE OR UPDATE OF status, amount_micros, created_at, wallet_id, account_id, currency, kind, fee_lamports
    ON transactions FOR EACH ROW EXECUTE FUNCTION analytics_transactions();

--bun:split

CREATE TRIGGER analytics AFTER INSERT OR DELETE OR UPDATE OF state, amount_micros, created_at, wallet_id, account_id, currency, protocol
    ON x402_payments FOR EACH ROW EXECUTE FUNCTION analytics_x402();

--bun:split

CREATE TRIGGER analytics AFTER INSERT OR DELETE OR UPDATE OF status, amount, created_at, wallet_id, account_id, asset
    ON deposits FOR EACH ROW EXECUTE FUNCTION analytics_deposits();

--bun:split

CREATE TRIGGER analytics AFTER INSERT OR DELETE OR UPDATE OF state, outcome, decided_at, wallet_id, account_id
    ON send_requests FOR EACH ROW EXECUTE FUNCTION analytics_send_requests();

--bun:split

-- Every day of history: a range may start anywhere.
INSERT INTO analytics_days (account_id, day, wallet_id, n, usd_micros, eur_micros, fee_lamports,
                            x402_n, x402_micros, mpp_n, mpp_micros, usdc_in_n, usdc_in, sol_in_n, sol_in)
SELECT account_id, (at AT TIME ZONE 'UTC')::date, wallet_id,
    count(*) FILTER (WHERE kind <> 'deposit'),
    coalesce(sum(amount) FILTER (WHERE kind <> 'deposit' AND currency = 'USD'), 0),
    coalesce(sum(amount) FILTER (WHERE kind <> 'deposit' AND currency = 'EUR'), 0),
    coalesce(sum(fee), 0),
    count(*) FILTER (WHERE kind = 'x402'), coalesce(sum(amount) FILTER (WHERE kind = 'x402' AND currency = 'USD'), 0),
    count(*) FILTER (WHERE kind = 'mpp'), coalesce(sum(amount) FILTER (WHERE kind = 'mpp' AND currency = 'USD'), 0),
    count(*) FILTER (WHERE kind = 'deposit' AND currency = 'usdc'), coalesce(sum(amount) FILTER (WHERE kind = 'deposit' AND currency = 'usdc'), 0),
    count(*) FILTER (WHERE kind = 'deposit' AND currency = 'sol'), coalesce(sum(amount) FILTER (WHERE kind = 'deposit' AND currency = 'sol'), 0)
FROM (
    SELECT account_id, wallet_id, created_at AS at, kind, currency, amount_micros AS amount,
        CASE WHEN status = 'confirmed' THEN fee_lamports END AS fee
    FROM transactions WHERE status <> 'failed'
    UNION ALL
    SELECT account_id, wallet_id, created_at, protocol, currency, amount_micros, NULL FROM x402_payments WHERE state = 'signed'
    UNION ALL
    SELECT account_id, wallet_id, created_at, 'deposit', asset, amount, NULL FROM deposits WHERE status = 'confirmed') AS t
GROUP BY 1, 2, 3;

--bun:split

INSERT INTO analytics_blocked_days (account_id, day, wallet_id, reason, n)
SELECT account_id, (decided_at AT TIME ZONE 'UTC')::date, wallet_id, coalesce(outcome ->> 'reason', ''), count(*)
FROM send_requests WHERE state = 'decided' AND outcome ->> 'status' = 'blocked'
GROUP BY 1, 2, 3, 4;

--bun:split

-- The approvals a range decided, read from the index alone: their outcome,
-- request time and wallet ride along with the decision time.
CREATE INDEX approvals_account_decided_outcome ON approvals (account_id, decided_at) INCLUDE (status, created_at, wallet_id)
    WHERE decided_at IS NOT NULL;

--bun:split

DROP INDEX approvals_account_decided;

--bun:split

-- Lists filtered by a status or an asset find their page without reading
-- the rows of every other status or asset: a rare one (failed, or an
-- asset the account seldom moves) would otherwise walk all history.
CREATE INDEX transactions_account_status ON transactions (account_id, status, created_at DESC, id DESC);

--bun:split

CREATE INDEX transactions_account_asset ON transactions (account_id, asset, created_at DESC, id DESC);

--bun:split

CREATE INDEX deposits_account_asset ON deposits (account_id, asset, created_at DESC, id DESC);

--bun:split

-- A list of sends and deposits reads a page of each: a status no deposit
-- has (pending), or a wallet no deposit reached, must not walk them all.
CREATE INDEX deposits_account_status ON deposits (account_id, status, created_at DESC, id DESC);

--bun:split

CREATE INDEX deposits_wallet_newest ON deposits (wallet_id, created_at DESC, id DESC);

--bun:split

-- The x402 and MPP lists read pay requests (send_requests with x402) of
-- one protocol, newest first, by account and by wallet. The protocol is
-- the lists' expression (payment.ListX402), so its statistics let the
-- planner walk the index in order rather than sort every pay request.
CREATE INDEX send_requests_x402_newest ON send_requests (account_id, (COALESCE(x402 ->> 'protocol', 'x402')), created_at DESC, id DESC)
    WHERE x402 IS NOT NULL;

--bun:split

CREATE INDEX send_requests_x402_wallet ON send_requests (wallet_id, (COALESCE(x402 ->> 'protocol', 'x402')), created_at DESC, id DESC)
    WHERE x402 IS NOT NULL;

--bun:split

-- How many pay requests a protocol has: without it the planner guessed a
-- few hundred of twenty thousand and sorted them all for a page.
CREATE STATISTICS send_requests_x402_protocol ON (COALESCE(x402 ->> 'protocol', 'x402')), (x402 IS NOT NULL) FROM send_requests;

--bun:split

-- Each listed pay request finds its approval and the payment that
-- redeemed a grant by index, not by reading every approval.
CREATE INDEX approvals_request ON approvals (request_id) WHERE request_id IS NOT NULL;

--bun:split

CREATE INDEX x402_payments_grant ON x402_payments (approval_id) WHERE approval_id IS NOT NULL;

--bun:split

CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created_at DESC, id DESC);

--bun:split

CREATE INDEX approvals_wallet_newest ON approvals (wallet_id, created_at DESC, id DESC);

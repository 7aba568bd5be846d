-- Each wallet's reservations summed by UTC hour, kept by triggers, so a
-- decision reads its windows' totals from at most 30 × 24 rows and the
-- rows of one edge hour per window, not every payment of the window
-- (internal/payment.ReadUsage). What counts is what ReadUsage counted:
-- transactions pending or confirmed, and x402 payments signed (not yet
-- settled), each by its created_at.

CREATE TABLE wallet_usage_hours (
    -- No foreign key: its check would take a share lock on the wallet,
    -- which a decision holds for update; wallets are never deleted.
    wallet_id uuid        NOT NULL,
    hour      timestamptz NOT NULL,
    micros    bigint      NOT NULL,
    -- micros in the key's index: a month's 720 sums are read from the
    -- index alone, not from as many heap pages (one wallet's hours lie
    -- among every other wallet's).
    PRIMARY KEY (wallet_id, hour) INCLUDE (micros)
);

--bun:split

-- The UTC hour t falls in, whatever the session's time zone.
CREATE FUNCTION usage_hour(t timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT date_bin('1 hour', t, timestamptz '1970-01-01 00:00:00+00')
$$;

--bun:split

CREATE FUNCTION usage_hours_add(p_wallet uuid, p_at timestamptz, p_micros bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO wallet_usage_hours (wallet_id, hour, micros) VALUES (p_wallet, usage_hour(p_at), p_micros)
    ON CONFLICT (wallet_id, hour) DO UPDATE SET micros = wallet_usage_hours.micros + excluded.micros
$$;

--bun:split

-- A row's part in its hour: taken out as it was (counted_old), put in as
-- it is (counted_new). An update that changes nothing counted (a pending
-- transaction confirmed) writes nothing.
CREATE FUNCTION usage_hours_move(counted_old boolean, counted_new boolean,
                                 old_wallet uuid, old_at timestamptz, old_micros bigint,
                                 new_wallet uuid, new_at timestamptz, new_micros bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF counted_old AND counted_new AND old_wallet = new_wallet AND old_micros = new_micros
       AND usage_hour(old_at) = usage_hour(new_at) THEN
        RETURN;
    END IF;
    IF counted_old THEN
        PERFORM usage_hours_add(old_wallet, old_at, -old_micros);
    END IF;
    IF counted_new THEN
        PERFORM usage_hours_add(new_wallet, new_at, new_micros);
    END IF;
END
$$;

--bun:split

-- What counts of each table: a transaction pending or confirmed, an x402
-- payment signed (not yet settled).
CREATE FUNCTION usage_hours_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.status IN ('pending', 'confirmed'),
                             TG_OP <> 'DELETE' AND NEW.status IN ('pending', 'confirmed'),
                             OLD.wallet_id, OLD.created_at, OLD.amount_micros, NEW.wallet_id, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION usage_hours_x402() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.state = 'signed',
                             TG_OP <> 'DELETE' AND NEW.state = 'signed',
                             OLD.wallet_id, OLD.created_at, OLD.amount_micros, NEW.wallet_id, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

-- The triggers first: creating them waits for the writers under way and
-- holds new ones until this migration commits, so the sums below see
-- every row, and every later change goes through a trigger.
CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF status, amount_micros, created_at, wallet_id
    ON transactions FOR EACH ROW EXECUTE FUNCTION usage_hours_transactions();

--bun:split

CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF state, amount_micros, created_at, wallet_id
    ON x402_payments FOR EACH ROW EXECUTE FUNCTION usage_hours_x402();

--bun:split

-- Only what a window can still hold (the longest is 30 days): older
-- hours are never read, and a release there later leaves a harmless
-- negative row. Summing all history would hold every writer back for as
-- long on a large database.
INSERT INTO wallet_usage_hours (wallet_id, hour, micros)
SELECT wallet_id, usage_hour(created_at), sum(amount_micros) FROM (
    SELECT wallet_id, created_at, amount_micros FROM transactions
    WHERE status IN ('pending', 'confirmed') AND created_at >= now() - interval '31 days'
    UNION ALL
    SELECT wallet_id, created_at, amount_micros FROM x402_payments
    WHERE state = 'signed' AND created_at >= now() - interval '31 days') AS t
GROUP BY 1, 2;

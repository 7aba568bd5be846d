DROP INDEX transactions_wallet_asset;

--bun:split

DROP TRIGGER usage_hours ON transactions;

--bun:split

DROP TRIGGER usage_hours ON x402_payments;

--bun:split

DROP FUNCTION usage_hours_move(boolean, boolean, uuid, text, timestamptz, bigint, uuid, text, timestamptz, bigint);

--bun:split

DROP FUNCTION usage_hours_add(uuid, text, timestamptz, bigint);

--bun:split

-- Payments in other assets than USDC have no place in the older schema:
-- rather than drop them, the rollback refuses. Only EUR sums of no
-- payment (a release left behind) can go.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM transactions WHERE asset <> 'USDC') OR EXISTS (SELECT 1 FROM x402_payments WHERE symbol <> 'USDC') THEN
        RAISE EXCEPTION 'payments in assets other than USDC exist: this schema cannot hold them';
    END IF;
END
$$;

--bun:split

DELETE FROM wallet_usage_hours WHERE currency <> 'USD';

--bun:split

ALTER TABLE wallet_usage_hours DROP CONSTRAINT wallet_usage_hours_pkey;

--bun:split

ALTER TABLE wallet_usage_hours DROP COLUMN currency;

--bun:split

ALTER TABLE wallet_usage_hours ADD PRIMARY KEY (wallet_id, hour) INCLUDE (micros);

--bun:split

CREATE FUNCTION usage_hours_add(p_wallet uuid, p_at timestamptz, p_micros bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO wallet_usage_hours (wallet_id, hour, micros) VALUES (p_wallet, usage_hour(p_at), p_micros)
    ON CONFLICT (wallet_id, hour) DO UPDATE SET micros = wallet_usage_hours.micros + excluded.micros
$$;

--bun:split

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

CREATE OR REPLACE FUNCTION usage_hours_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.status IN ('pending', 'confirmed'),
                             TG_OP <> 'DELETE' AND NEW.status IN ('pending', 'confirmed'),
                             OLD.wallet_id, OLD.created_at, OLD.amount_micros, NEW.wallet_id, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION usage_hours_x402() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.state = 'signed',
                             TG_OP <> 'DELETE' AND NEW.state = 'signed',
                             OLD.wallet_id, OLD.created_at, OLD.amount_micros, NEW.wallet_id, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF status, amount_micros, created_at, wallet_id
    ON transactions FOR EACH ROW EXECUTE FUNCTION usage_hours_transactions();

--bun:split

CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF state, amount_micros, created_at, wallet_id
    ON x402_payments FOR EACH ROW EXECUTE FUNCTION usage_hours_x402();

--bun:split

ALTER TABLE x402_payments DROP COLUMN currency, DROP COLUMN symbol;

--bun:split

ALTER TABLE transactions DROP COLUMN currency, DROP COLUMN asset,
    DROP CONSTRAINT transactions_kind_check,
    ADD CONSTRAINT transactions_kind_check CHECK (kind IN ('usdc', 'x402'));

--bun:split

ALTER TABLE approvals DROP COLUMN asset;

--bun:split

ALTER TABLE send_requests DROP COLUMN asset;

--bun:split

ALTER TABLE wallets DROP COLUMN eur_limits, DROP COLUMN assets;

-- More currencies. A payment names its asset (a symbol of internal/asset's
-- table, USDC for every earlier one) and, where it reserves, the currency
-- the asset is pegged to: the policy's limits are per currency, USD
-- stablecoins together at 1:1, EUR ones under the _eur limits. Amounts
-- stay in the asset's base units, which every counted asset keeps at 6
-- decimals: one base unit is one micro of the currency.

ALTER TABLE wallets
    -- The assets the wallet may spend (symbols), USDC only until a
    -- human allows more.
    ADD COLUMN assets text[] NOT NULL DEFAULT '{USDC}',
    -- The EUR limits (micros: daily, max_tx, approval_threshold and the
    -- optional weekly, monthly); NULL: no EUR spending.
    ADD COLUMN eur_limits jsonb;

--bun:split

ALTER TABLE send_requests ADD COLUMN asset text NOT NULL DEFAULT 'USDC';

--bun:split

ALTER TABLE approvals ADD COLUMN asset text NOT NULL DEFAULT 'USDC';

--bun:split

-- kind names what moved: an asset's symbol in lower case (usdc, pyusd,
-- or one an operator added), or x402.
ALTER TABLE transactions
    ADD COLUMN asset text NOT NULL DEFAULT 'USDC',
    ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency IN ('USD', 'EUR')),
    DROP CONSTRAINT transactions_kind_check,
    ADD CONSTRAINT transactions_kind_check CHECK (kind ~ '^[a-z0-9]{2,10}$');

--bun:split

ALTER TABLE x402_payments
    ADD COLUMN symbol text NOT NULL DEFAULT 'USDC',
    ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency IN ('USD', 'EUR'));

--bun:split

-- The triggers go first (they name the functions replaced below); the
-- migration's transaction holds every writer until it commits.
DROP TRIGGER usage_hours ON transactions;

--bun:split

DROP TRIGGER usage_hours ON x402_payments;

--bun:split

DROP FUNCTION usage_hours_move(boolean, boolean, uuid, timestamptz, bigint, uuid, timestamptz, bigint);

--bun:split

DROP FUNCTION usage_hours_add(uuid, timestamptz, bigint);

--bun:split

ALTER TABLE wallet_usage_hours ADD COLUMN currency text NOT NULL DEFAULT 'USD';

--bun:split

ALTER TABLE wallet_usage_hours DROP CONSTRAINT wallet_usage_hours_pkey;

--bun:split

ALTER TABLE wallet_usage_hours ADD PRIMARY KEY (wallet_id, currency, hour) INCLUDE (micros);

--bun:split

CREATE FUNCTION usage_hours_add(p_wallet uuid, p_currency text, p_at timestamptz, p_micros bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO wallet_usage_hours (wallet_id, currency, hour, micros) VALUES (p_wallet, p_currency, usage_hour(p_at), p_micros)
    ON CONFLICT (wallet_id, currency, hour) DO UPDATE SET micros = wallet_usage_hours.micros + excluded.micros
$$;

--bun:split

-- A row's part in its hour and currency: taken out as it was
-- (counted_old), put in as it is (counted_new). An update that changes
-- nothing counted (a pending transaction confirmed) writes nothing.
CREATE FUNCTION usage_hours_move(counted_old boolean, counted_new boolean,
                                 old_wallet uuid, old_currency text, old_at timestamptz, old_micros bigint,
                                 new_wallet uuid, new_currency text, new_at timestamptz, new_micros bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF counted_old AND counted_new AND old_wallet = new_wallet AND old_currency = new_currency
       AND old_micros = new_micros AND usage_hour(old_at) = usage_hour(new_at) THEN
        RETURN;
    END IF;
    IF counted_old THEN
        PERFORM usage_hours_add(old_wallet, old_currency, old_at, -old_micros);
    END IF;
    IF counted_new THEN
        PERFORM usage_hours_add(new_wallet, new_currency, new_at, new_micros);
    END IF;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION usage_hours_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.status IN ('pending', 'confirmed'),
                             TG_OP <> 'DELETE' AND NEW.status IN ('pending', 'confirmed'),
                             OLD.wallet_id, OLD.currency, OLD.created_at, OLD.amount_micros,
                             NEW.wallet_id, NEW.currency, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION usage_hours_x402() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM usage_hours_move(TG_OP <> 'INSERT' AND OLD.state = 'signed',
                             TG_OP <> 'DELETE' AND NEW.state = 'signed',
                             OLD.wallet_id, OLD.currency, OLD.created_at, OLD.amount_micros,
                             NEW.wallet_id, NEW.currency, NEW.created_at, NEW.amount_micros);
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF status, amount_micros, created_at, wallet_id, currency
    ON transactions FOR EACH ROW EXECUTE FUNCTION usage_hours_transactions();

--bun:split

CREATE TRIGGER usage_hours AFTER INSERT OR DELETE OR UPDATE OF state, amount_micros, created_at, wallet_id, currency
    ON x402_payments FOR EACH ROW EXECUTE FUNCTION usage_hours_x402();

--bun:split

CREATE INDEX transactions_wallet_asset ON transactions (wallet_id, asset, created_at);

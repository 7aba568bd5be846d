-- Deposits per account, UTC day, wallet and asset (the deposits table's
-- key: a symbol in lower case, or sol), kept by a trigger as
-- analytics_days is, so analytics' "received" names every asset a wallet
-- can hold. analytics_days' usdc_in and sol_in columns stay as 0034 keeps
-- them; analytics reads this table.
CREATE TABLE analytics_received_days (
    -- No foreign keys, as analytics_days.
    account_id uuid   NOT NULL,
    day        date   NOT NULL,
    wallet_id  uuid   NOT NULL,
    asset      text   NOT NULL,
    n          bigint NOT NULL,
    amount     bigint NOT NULL,
    PRIMARY KEY (account_id, day, wallet_id, asset)
);

--bun:split

-- Adds a confirmed deposit (sign 1) or takes it out (sign -1).
CREATE FUNCTION analytics_received(sign int, p_account uuid, p_wallet uuid, p_at timestamptz, p_asset text, p_amount bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO analytics_received_days AS r (account_id, day, wallet_id, asset, n, amount)
    VALUES (p_account, (p_at AT TIME ZONE 'UTC')::date, p_wallet, p_asset, sign, sign * p_amount)
    ON CONFLICT (account_id, day, wallet_id, asset) DO UPDATE SET n = r.n + excluded.n, amount = r.amount + excluded.amount
$$;

--bun:split

CREATE FUNCTION analytics_received_deposits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.status = 'confirmed' THEN
        PERFORM analytics_received(-1, OLD.account_id, OLD.wallet_id, OLD.created_at, OLD.asset, OLD.amount);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status = 'confirmed' THEN
        PERFORM analytics_received(1, NEW.account_id, NEW.wallet_id, NEW.created_at, NEW.asset, NEW.amount);
    END IF;
    RETURN NULL;
END
$$;

--bun:split

-- The trigger first: creating it waits for the writers under way and holds
-- new ones until this migration commits, so the sums below see every row.
CREATE TRIGGER analytics_received AFTER INSERT OR DELETE OR UPDATE OF status, amount, created_at, wallet_id, account_id, asset
    ON deposits FOR EACH ROW EXECUTE FUNCTION analytics_received_deposits();

--bun:split

INSERT INTO analytics_received_days (account_id, day, wallet_id, asset, n, amount)
SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, wallet_id, asset, count(*), sum(amount)
FROM deposits WHERE status = 'confirmed'
GROUP BY 1, 2, 3, 4;

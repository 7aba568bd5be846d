-- The optional rules of a wallet's policy. NULL: the rule does
-- not apply, so existing wallets keep their behaviour.
ALTER TABLE wallets
    ADD COLUMN weekly_limit_micros bigint CHECK (weekly_limit_micros >= 0),
    ADD COLUMN monthly_limit_micros bigint CHECK (monthly_limit_micros >= 0),
    ADD COLUMN max_tx_per_hour integer CHECK (max_tx_per_hour >= 0),
    ADD COLUMN max_tx_per_day integer CHECK (max_tx_per_day >= 0),
    -- {"timezone": IANA name, "days": ["mon", …], "from": "HH:MM", "to": "HH:MM"}
    ADD COLUMN active_hours jsonb CHECK (active_hours IS NULL OR jsonb_typeof(active_hours) = 'object'),
    ADD COLUMN outside_active_hours text NOT NULL DEFAULT 'block' CHECK (outside_active_hours IN ('block', 'approve'));

--bun:split

-- A wallet's payments decided in the last hours: the velocity count
-- (payment.ReadUsage) reads only this index and the rows it finds.
CREATE INDEX send_requests_wallet_decided ON send_requests (wallet_id, decided_at) WHERE state = 'decided';

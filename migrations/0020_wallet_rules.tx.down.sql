DROP INDEX send_requests_wallet_decided;

--bun:split

ALTER TABLE wallets
    DROP COLUMN weekly_limit_micros,
    DROP COLUMN monthly_limit_micros,
    DROP COLUMN max_tx_per_hour,
    DROP COLUMN max_tx_per_day,
    DROP COLUMN active_hours,
    DROP COLUMN outside_active_hours;

DROP TRIGGER usage_hours ON x402_payments;

--bun:split

DROP TRIGGER usage_hours ON transactions;

--bun:split

DROP FUNCTION usage_hours_x402();

--bun:split

DROP FUNCTION usage_hours_transactions();

--bun:split

DROP FUNCTION usage_hours_move(boolean, boolean, uuid, timestamptz, bigint, uuid, timestamptz, bigint);

--bun:split

DROP FUNCTION usage_hours_add(uuid, timestamptz, bigint);

--bun:split

DROP FUNCTION usage_hour(timestamptz);

--bun:split

DROP TABLE wallet_usage_hours;

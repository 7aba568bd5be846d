DROP TRIGGER analytics_received ON deposits;

--bun:split

DROP FUNCTION analytics_received_deposits();

--bun:split

DROP FUNCTION analytics_received(int, uuid, uuid, timestamptz, text, bigint);

--bun:split

DROP TABLE analytics_received_days;

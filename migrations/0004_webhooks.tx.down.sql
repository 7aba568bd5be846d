DROP TRIGGER events_fan_out ON events;

--bun:split

DROP FUNCTION events_fan_out();

--bun:split

DROP TABLE delivery_attempts;

--bun:split

DROP TABLE deliveries;

--bun:split

DROP TABLE webhook_endpoints;

DROP TRIGGER stream_notify_users ON users;

--bun:split

DROP TRIGGER stream_notify_sessions ON sessions;

--bun:split

DROP FUNCTION stream_notify_sessions();

--bun:split

DROP INDEX deliveries_failed;

--bun:split

DROP TRIGGER stream_notify_delivery ON deliveries;

--bun:split

DROP FUNCTION stream_notify_delivery();

--bun:split

DROP TRIGGER stream_notify_event ON events;

--bun:split

DROP FUNCTION stream_notify_event();

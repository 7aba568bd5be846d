-- The dashboard's event stream (GET /api/dashboard/v1/events) follows the
-- outbox as it commits: every event, and every delivery that ends failed,
-- notifies the API processes (a notification is sent at commit, in commit
-- order, and never for a rolled-back change). The payload names the row
-- only ("e <account> <event id>", "d <account> <delivery id>"): the API
-- reads the row itself, and only when a stream of that account is open.
CREATE FUNCTION stream_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentwallet_stream', 'e ' || NEW.account_id || ' ' || NEW.id);
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER stream_notify_event AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION stream_notify_event();

--bun:split

CREATE FUNCTION stream_notify_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentwallet_stream', 'd ' || NEW.account_id || ' ' || NEW.id);
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER stream_notify_delivery AFTER UPDATE OF status ON deliveries FOR EACH ROW
    WHEN (NEW.status = 'failed' AND OLD.status IS DISTINCT FROM 'failed') EXECUTE FUNCTION stream_notify_delivery();

--bun:split

-- A stream replays the failed deliveries a reconnecting page missed.
CREATE INDEX deliveries_failed ON deliveries (account_id, completed_at, id) WHERE status = 'failed';

--bun:split

-- A session that ends or changes account, a user removed or given
-- another role: the streams re-check their sessions at once. One payload
-- for all, so a transaction that ends many sessions notifies once.
CREATE FUNCTION stream_notify_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentwallet_stream', 's');
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER stream_notify_sessions AFTER UPDATE OF ended_at, account_id ON sessions FOR EACH ROW
    WHEN (NEW.ended_at IS DISTINCT FROM OLD.ended_at OR NEW.account_id IS DISTINCT FROM OLD.account_id)
    EXECUTE FUNCTION stream_notify_sessions();

--bun:split

CREATE TRIGGER stream_notify_users AFTER UPDATE OF role OR DELETE ON users FOR EACH ROW
    EXECUTE FUNCTION stream_notify_sessions();

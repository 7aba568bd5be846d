CREATE OR REPLACE FUNCTION stream_notify_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentwallet_stream', 'd ' || NEW.account_id || ' ' || NEW.id);
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION stream_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentwallet_stream', 'e ' || NEW.account_id || ' ' || NEW.id);
    RETURN NULL;
END
$$;

--bun:split

DROP FUNCTION stream_watched(uuid);

--bun:split

DROP TABLE stream_watchers;

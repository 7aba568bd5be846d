-- The event stream's notifications only for accounts someone watches.
-- A transaction that notifies takes a cluster-wide lock at commit (the
-- notification queue's), so every event commit notifying, watched or not,
-- stopped concurrent commits from grouping. Each API process's hub now
-- lists here the accounts it has open streams for (one row per account
-- and hub, refreshed with the streams' heartbeat, deleted when the
-- account's last stream there ends; a row past expires_at is ignored, and
-- removed by any hub). UNLOGGED: the rows are as short-lived as the
-- processes that write them, and a crash empties the table, which the
-- hubs notice at their next refresh (their streams end and reconnect).
CREATE UNLOGGED TABLE stream_watchers (
    account_id uuid        NOT NULL,
    hub_id     uuid        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, hub_id)
);

--bun:split

-- stream_watched says whether account has a live watcher, for a trigger
-- that is about to notify. The shared advisory lock (class 24, the
-- account's hash; held to the end of the writer's transaction) is what
-- makes a registration safe: a hub registers under the same lock taken
-- exclusively, so it waits for every transaction that looked here before
-- its row existed to end (committed, and therefore in the stream's replay
-- or the page's first read, which come after the registration), and every
-- transaction that looks later sees the row. The check reads a fresh
-- snapshot (READ COMMITTED, a volatile function): the row is seen as soon
-- as the registration commits.
CREATE FUNCTION stream_watched(p_account uuid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(24, hashtext(p_account::text));
    RETURN EXISTS (SELECT 1 FROM stream_watchers WHERE account_id = p_account AND expires_at > now());
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION stream_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF stream_watched(NEW.account_id) THEN
        PERFORM pg_notify('agentwallet_stream', 'e ' || NEW.account_id || ' ' || NEW.id);
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE OR REPLACE FUNCTION stream_notify_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF stream_watched(NEW.account_id) THEN
        PERFORM pg_notify('agentwallet_stream', 'd ' || NEW.account_id || ' ' || NEW.id);
    END IF;
    RETURN NULL;
END
$$;

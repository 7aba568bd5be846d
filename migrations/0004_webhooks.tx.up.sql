-- A receiver of an account's events. The signing secret is sealed to the
-- worker's master key (internal/signer), bound to the endpoint id: the API
-- shows it once at creation and can never read it again. During a rotation
-- the previous secret keeps signing until previous_expires_at.
CREATE TABLE webhook_endpoints (
    id                     uuid PRIMARY KEY,
    account_id             uuid NOT NULL REFERENCES accounts (id),
    url                    text NOT NULL CHECK (char_length(url) <= 2048),
    format                 text NOT NULL CHECK (format IN ('json', 'slack')),
    events                 text[] NOT NULL,
    description            text CHECK (char_length(description) <= 500),
    enabled                boolean NOT NULL DEFAULT true,
    -- Slack format: the Slack user ids whose buttons may act (empty: any),
    -- and the token the endpoint's buttons carry (only messages posted to
    -- this endpoint have it).
    slack_approvers        text[] NOT NULL DEFAULT '{}',
    slack_token            text NOT NULL,
    secret_key_id          text NOT NULL,
    secret_sealed          bytea NOT NULL,
    previous_key_id        text,
    previous_sealed        bytea,
    previous_expires_at    timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    deleted_at             timestamptz
);

--bun:split

CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

--bun:split

-- One event to one endpoint. `attempts` counts the POSTs made; a replay is
-- a new delivery of the same event (replay_of names the original).
CREATE TABLE deliveries (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id),
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id),
    event_id        uuid NOT NULL REFERENCES events (id),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    replay_of       uuid REFERENCES deliveries (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    enqueued_at     timestamptz,
    last_attempt_at timestamptz,
    completed_at    timestamptz
);

--bun:split

CREATE INDEX deliveries_endpoint_newest ON deliveries (endpoint_id, created_at DESC, id DESC);

--bun:split

-- The dispatcher's work: deliveries whose task is not known to be queued.
CREATE INDEX deliveries_unqueued ON deliveries (created_at) WHERE status = 'pending' AND enqueued_at IS NULL;

--bun:split

CREATE INDEX deliveries_pending ON deliveries (enqueued_at) WHERE status = 'pending';

--bun:split

-- Every POST of a delivery: when, the answer's status and first KiB, or
-- the error.
CREATE TABLE delivery_attempts (
    delivery_id   uuid NOT NULL REFERENCES deliveries (id),
    n             integer NOT NULL CHECK (n > 0),
    at            timestamptz NOT NULL,
    status_code   integer,
    latency_ms    integer NOT NULL,
    error         text,
    response_head text,
    PRIMARY KEY (delivery_id, n)
);

--bun:split

-- The outbox fans out in the commit of the event itself: one delivery per
-- enabled endpoint of the account subscribed to the event's kind, then a
-- notification that wakes the worker's dispatcher (it also polls).
CREATE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO deliveries (id, account_id, endpoint_id, event_id)
    SELECT gen_random_uuid(), NEW.account_id, e.id, NEW.id
    FROM webhook_endpoints e
    WHERE e.account_id = NEW.account_id AND e.enabled AND e.deleted_at IS NULL AND NEW.kind = ANY (e.events);
    IF FOUND THEN
        PERFORM pg_notify('agentwallet_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER events_fan_out AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_fan_out();

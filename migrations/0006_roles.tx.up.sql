-- Key roles (internal/auth's permission table): an `admin` key may do
-- everything; an `agent` key spends within its rules and may only tighten
-- them. Keys no other key created (`api bootstrap`, `api keys create`) were
-- the operator keys that could approve: they become admin keys.
ALTER TABLE api_keys
    ADD COLUMN role       text NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'admin')),
    -- The wallets an agent key reaches; NULL reaches every wallet of the
    -- account. Admin keys are never scoped.
    ADD COLUMN wallet_ids uuid[] CHECK (wallet_ids IS NULL OR (role = 'agent' AND cardinality(wallet_ids) BETWEEN 1 AND 1000)),
    ADD COLUMN label      text CHECK (char_length(label) BETWEEN 1 AND 100),
    -- The first key of the key's rotation chain: a rotation keeps it, so
    -- no successor of a payment's requester may approve that payment.
    ADD COLUMN lineage    uuid;

--bun:split

UPDATE api_keys SET role = 'admin' WHERE created_by IS NULL;

--bun:split

WITH RECURSIVE chain (id, root) AS (
    SELECT k.id, k.id FROM api_keys AS k
    WHERE NOT EXISTS (SELECT 1 FROM api_keys AS p WHERE p.replaced_by = k.id)
    UNION ALL
    SELECT k.replaced_by, c.root FROM chain AS c JOIN api_keys AS k ON k.id = c.id
    WHERE k.replaced_by IS NOT NULL
)
UPDATE api_keys SET lineage = chain.root FROM chain WHERE api_keys.id = chain.id;

--bun:split

ALTER TABLE api_keys ALTER COLUMN lineage SET NOT NULL, ALTER COLUMN role DROP DEFAULT;

--bun:split

-- The requesting key's lineage, recorded with every send and approval.
ALTER TABLE send_requests ADD COLUMN key_lineage uuid;

--bun:split

UPDATE send_requests AS r SET key_lineage = k.lineage FROM api_keys AS k WHERE k.id = r.key_id;

--bun:split

ALTER TABLE approvals ADD COLUMN requested_lineage uuid;

--bun:split

UPDATE approvals AS a SET requested_lineage = k.lineage FROM api_keys AS k WHERE k.id = a.requested_by;

--bun:split

-- The Slack workspace bound to a Slack endpoint by its first accepted
-- click; clicks from any other workspace are refused. A new URL clears it
-- (and issues a new button token).
ALTER TABLE webhook_endpoints ADD COLUMN slack_team_id text;

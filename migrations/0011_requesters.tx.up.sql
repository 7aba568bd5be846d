-- The person who made a key in the dashboard (their address); created_by
-- keeps naming the key that made one through the API. Keys of the command
-- line have neither.
ALTER TABLE api_keys ADD COLUMN created_by_user text;

--bun:split

-- A key's ancestors: the lineage actors it descends from besides its own
-- rotation lineage, i.e. its creator's (the creating key's lineage,
-- key_<root>, and that key's ancestors; or user:<address> for a person).
-- An approve is refused when the payment's requester is the approver's
-- lineage or one of its ancestors, so a requester cannot mint a key and
-- approve with it; removing a person revokes the keys that name them.
-- Keys of the command line have none.
ALTER TABLE api_keys ADD COLUMN ancestors text[] NOT NULL DEFAULT '{}';

--bun:split

-- Keys a person made in the dashboard before this: their key.created
-- entry (of the lineage's first key, so rotations follow) names the person.
UPDATE api_keys AS k SET created_by_user = substr(a.actor, 6)
FROM audit_log AS a
WHERE a.account_id = k.account_id AND a.action = 'key.created'
    AND a.target = 'key:key_' || k.lineage::text AND a.actor LIKE 'user:%';

--bun:split

WITH RECURSIVE tree (id, lineage, ancestors, depth) AS (
    SELECT k.id, k.lineage,
        CASE WHEN k.created_by_user IS NULL THEN '{}'::text[] ELSE ARRAY['user:' || k.created_by_user] END, 1
    FROM api_keys AS k WHERE k.created_by IS NULL
    UNION ALL
    SELECT k.id, k.lineage, t.ancestors || ('key_' || t.lineage::text), t.depth + 1
    FROM tree AS t JOIN api_keys AS k ON k.created_by = t.id
    WHERE t.depth < 1000
)
UPDATE api_keys SET ancestors = ARRAY(SELECT DISTINCT a FROM unnest(tree.ancestors) AS a WHERE a <> 'key_' || tree.lineage::text ORDER BY 1)
FROM tree WHERE api_keys.id = tree.id AND cardinality(tree.ancestors) > 0;

--bun:split

CREATE INDEX api_keys_ancestors ON api_keys USING gin (ancestors);

--bun:split

-- The dashboard user who made a send (key_id is NULL then): audited as
-- user:<address>, and its approval names them as requester.
ALTER TABLE send_requests ADD COLUMN user_address text;

--bun:split

-- Who may not approve the payment: the requester (key_<lineage> or
-- user:<address>) and, when the requester is an admin key, everyone it
-- descends from (its creator holds it too, so its payments are the
-- creator's own). NULL on requests made before it: the requester alone.
ALTER TABLE send_requests ADD COLUMN requesters text[];

--bun:split

ALTER TABLE approvals ADD COLUMN requested_by_user text, ADD COLUMN requesters text[];

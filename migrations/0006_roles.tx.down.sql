ALTER TABLE webhook_endpoints DROP COLUMN slack_team_id;

--bun:split

ALTER TABLE approvals DROP COLUMN requested_lineage;

--bun:split

ALTER TABLE send_requests DROP COLUMN key_lineage;

--bun:split

ALTER TABLE api_keys DROP COLUMN lineage, DROP COLUMN label, DROP COLUMN wallet_ids, DROP COLUMN role;

ALTER TABLE approvals DROP COLUMN requested_by_user, DROP COLUMN requesters;

--bun:split

ALTER TABLE send_requests DROP COLUMN user_address, DROP COLUMN requesters;

--bun:split

DROP INDEX api_keys_ancestors;

--bun:split

ALTER TABLE api_keys DROP COLUMN ancestors, DROP COLUMN created_by_user;

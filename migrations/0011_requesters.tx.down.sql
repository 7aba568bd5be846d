ALTER TABLE approvals DROP COLUMN requested_by_user;

--bun:split

ALTER TABLE send_requests DROP COLUMN user_address;

--bun:split

DROP INDEX api_keys_ancestors;

--bun:split

ALTER TABLE api_keys DROP COLUMN ancestors, DROP COLUMN created_by_user;

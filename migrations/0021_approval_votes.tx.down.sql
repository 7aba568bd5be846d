DROP INDEX users_slack_member;

--bun:split

ALTER TABLE users DROP COLUMN slack_user_id;

--bun:split

DROP TABLE approval_votes;

--bun:split

ALTER TABLE approvals DROP COLUMN approvals_needed;

--bun:split

ALTER TABLE wallets DROP COLUMN approvals_required;

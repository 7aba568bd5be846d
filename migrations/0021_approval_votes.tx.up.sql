-- m-of-n approvals: how many distinct people must approve a
-- wallet's parked payments. 1 (the default) is today's behaviour.
ALTER TABLE wallets
    ADD COLUMN approvals_required integer NOT NULL DEFAULT 1 CHECK (approvals_required BETWEEN 1 AND 1000);

--bun:split

-- The quorum an approval was decided with (set by each vote and by the
-- decision); NULL on approvals decided before votes were recorded, which
-- needed one. A pending approval's quorum is read from its wallet.
ALTER TABLE approvals ADD COLUMN approvals_needed integer CHECK (approvals_needed >= 1);

--bun:split

-- One approve of one person. person is who the vote counts as (user:<address>
-- for a dashboard user, the person behind an admin key or a linked Slack
-- member; else the actor itself); claims are every actor it speaks for (the
-- voter's actor id, person and ancestry): a vote whose claims meet an
-- earlier vote's is refused, and the primary key stops a second vote of the
-- same person whatever the code does. Votes are added under the approval
-- row's lock.
CREATE TABLE approval_votes (
    approval_id uuid NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    person      text NOT NULL,
    by_actor    text NOT NULL,
    claims      text[] NOT NULL,
    note        text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (approval_id, person)
);

--bun:split

-- The approves recorded before votes: one vote each, by its approver.
INSERT INTO approval_votes (approval_id, person, by_actor, claims, note, at)
SELECT id, approved_by, approved_by, ARRAY[approved_by], note, COALESCE(decided_at, created_at)
FROM approvals WHERE approved_by IS NOT NULL;

--bun:split

-- A dashboard user's Slack member id: a Slack click by that member counts
-- as this person (owners set it).
ALTER TABLE users ADD COLUMN slack_user_id text CHECK (slack_user_id ~ '^[A-Z0-9]{2,32}$');

--bun:split

CREATE UNIQUE INDEX users_slack_member ON users (account_id, slack_user_id) WHERE slack_user_id IS NOT NULL;

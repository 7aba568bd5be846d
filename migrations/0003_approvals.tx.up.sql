-- Who approved an approval (set when it moves pending → signing, cleared if
-- it returns to pending unexecuted), the human's note, and what a system
-- rejection was about (`reason` holds its code, `reason_detail` the rule or
-- the node's message).
ALTER TABLE approvals
    ADD COLUMN approved_by   text,
    ADD COLUMN note          text CHECK (char_length(note) <= 500),
    ADD COLUMN reason_detail text;

--bun:split

-- Approvals held in `signing` longer than an approve waits are returned to
-- `pending` by the expiry task (an API crashed between the two steps).
CREATE INDEX approvals_signing ON approvals (decided_at) WHERE status = 'signing';

--bun:split

-- GET /audit-log filters by action or target, newest first.
CREATE INDEX audit_log_action ON audit_log (account_id, action, seq DESC);

--bun:split

CREATE INDEX audit_log_target ON audit_log (account_id, target, seq DESC);

--bun:split

-- GET /approvals?status=… newest first.
CREATE INDEX approvals_account_status ON approvals (account_id, status, created_at DESC, id DESC);

--bun:split

-- The key that created a key through POST /keys. Such keys are agent keys:
-- they may send and reject, never approve, or an agent could mint a second
-- key and approve its own payments. Operator keys (created_by NULL: `api
-- bootstrap`, `api keys create`, the dashboard) may approve.
ALTER TABLE api_keys ADD COLUMN created_by uuid REFERENCES api_keys (id);

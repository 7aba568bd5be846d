package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
)

// AuditEntry is one link of the account's hash chain.
type AuditEntry struct {
	ID       string          `json:"id" format:"uuid" doc:"Entry id." example:"3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7"`
	Seq      int64           `json:"seq" doc:"Position in the account's chain, from 1: the order entries were sealed onto it, moments after their commit (so an entry may follow one whose at is later by as much)." example:"42"`
	At       time.Time       `json:"at" doc:"When it happened, ISO 8601 UTC (microseconds)." example:"2026-04-01T12:00:00.123456Z"`
	Actor    string          `json:"actor" doc:"Who acted: key_<uuid> (API key), user:<address> (dashboard user), slack:<user id>, or system. Agent keys read a person as user or slack, without the address or id (in details too), so those entries' hashes cannot be recomputed from their answer." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
	Action   string          `json:"action" doc:"What happened, e.g. send.sent, policy.updated, approval.rejected." example:"policy.updated"`
	Target   string          `json:"target" doc:"What it acted on: wallet:<id>, approval:ap_…, key:key_…, user:<address>, or webhook_endpoint:<id>." example:"wallet:5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Details  json.RawMessage `json:"details" doc:"The action's details, exactly the bytes that were hashed. A system rejection of an approval has reason policy_violation_at_approval; edits carry before and after." example:"{\"before\":{\"max_tx_usdc\":25},\"after\":{\"max_tx_usdc\":50}}"`
	PrevHash string          `json:"prev_hash" doc:"The previous entry's hash (64 zeros for the first), hex." example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	Hash     string          `json:"hash" doc:"SHA-256 over prev_hash and this entry's fields, hex; see docs/decisions/security.md for the exact bytes." example:"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"`
}

type auditInput struct {
	Action string `query:"action" maxLength:"50" doc:"Only entries with this action." example:"policy.updated"`
	Target string `query:"target" maxLength:"200" doc:"Only entries about this target (wallet:<id>, approval:ap_…, key:key_…)." example:"wallet:5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	PageQuery
}

type auditOutput struct {
	Body struct {
		Entries    []AuditEntry `json:"entries" doc:"Newest first."`
		NextCursor *string      `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"NDI"`
	}
}

// AuditBreak is the first link of a chain that does not hold.
type AuditBreak struct {
	Seq     int64  `json:"seq" doc:"The broken entry's position." example:"43"`
	EntryID string `json:"entry_id" format:"uuid" doc:"The broken entry's id (the nil UUID when the entry is missing)." example:"3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7"`
	Problem string `json:"problem" doc:"What does not hold: a sequence gap, a prev_hash that is not the previous entry's hash, a hash that does not match the entry's contents, or an entry verified at the checkpoint that is missing or has another hash." example:"hash does not match the entry's contents (edited)"`
}

type auditVerificationOutput struct {
	Body struct {
		Intact          bool        `json:"intact" doc:"No break found: every entry checked, now or by an earlier verification, matches its contents and its predecessor's hash, with no gap. Once false it stays false: the break stays reported until a full walk (api audit verify --full) finds the chain whole." example:"true"`
		FromSeq         int64       `json:"from_seq" doc:"This check started after this entry, the checkpoint an earlier verification reached (0: from the first entry)." example:"40"`
		Entries         int         `json:"entries" doc:"Entries read after from_seq, the broken one included." example:"2"`
		VerifiedThrough int64       `json:"verified_through_seq" doc:"The last seq of the intact prefix as far as verified (0 when the log is empty or its first entry is broken)." example:"42"`
		More            bool        `json:"more" doc:"Entries after verified_through_seq were left for the next call (at most 10000 are read per call): call again." example:"false"`
		FirstBreak      *AuditBreak `json:"first_break,omitempty" doc:"The first broken entry; absent when intact."`
		VerifiedAt      time.Time   `json:"verified_at" doc:"When this check ran, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	}
}

// MaxVerifyEntries bounds the entries one verification call reads.
const MaxVerifyEntries = 10_000

func (s *server) registerAudit(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-audit-log",
		Method:      http.MethodGet,
		Path:        Prefix + "/audit-log",
		Summary:     "Read the audit log",
		Description: "The account's append-only, hash-chained audit log, newest first, optionally by action or target. " +
			"Humans and admin keys read every entry. An agent key reads only entries about the wallets it reaches (target wallet:<id>), " +
			"approvals of those wallets, and its own keys (its rotation lineage and the keys it created, as GET /keys lists them), " +
			"and of refusals (permission.denied) only its own keys'; never users, sessions, webhook endpoints or other keys. " +
			"To an agent key a person is user or slack, without the address or id. " +
			"Each entry's hash covers its fields and the previous entry's hash, so an edit anywhere breaks the chain (`api audit verify`). " +
			"Entries are chained moments after their commit; a read first chains what has committed, and answers 503 when it cannot (try again), never a partial log.",
		Tags:   []string{"Audit"},
		Errors: []int{400, 401, 422, 503},
	}, s.listAudit)
	huma.Register(api, huma.Operation{
		OperationID: "verify-audit-log",
		Method:      http.MethodGet,
		Path:        Prefix + "/audit-log/verification",
		Summary:     "Verify the audit log's hash chain",
		Description: "Verifies the account's chain from where the last verification stopped (its checkpoint), recomputing every hash, at most 10000 entries per call, " +
			"and answers how far it holds: verified through entry N (`more` when entries remain: call again), or the first broken entry and what is wrong with it, " +
			"which every later call reports. It also checks that the checkpoint's entry kept its hash, so a rewrite of the entries before it is found; " +
			"an edit before the checkpoint behind the database's append-only triggers, hashes left alone, is found by a full walk (`api audit verify --full`). " +
			"The chain is the account's, across every wallet: admin keys and dashboard users may run it, agent keys may not. " +
			"It first chains the entries that have committed; 503 when it cannot (try again).",
		Tags:   []string{"Audit"},
		Errors: []int{401, 403, 503},
	}, s.verifyAudit)
}

func (s *server) verifyAudit(ctx context.Context, _ *struct{}) (*auditVerificationOutput, error) {
	st, err := audit.Check(ctx, s.DB, principal(ctx).AccountID, audit.CheckOptions{Max: MaxVerifyEntries})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &auditVerificationOutput{}
	out.Body.Intact = st.Break == nil
	out.Body.FromSeq = st.From
	out.Body.Entries = st.Entries
	out.Body.More = st.More
	out.Body.VerifiedThrough = st.VerifiedThrough
	out.Body.VerifiedAt = time.Now().UTC().Truncate(time.Second)
	if b := st.Break; b != nil {
		out.Body.FirstBreak = &AuditBreak{Seq: b.Seq, EntryID: b.EntryID.String(), Problem: b.Problem}
	}
	return out, nil
}

func (s *server) listAudit(ctx context.Context, in *auditInput) (*auditOutput, error) {
	if in.Action != "" && !slices.Contains(audit.Actions, in.Action) {
		return nil, errorf(http.StatusUnprocessableEntity, "action: must be one of "+strings.Join(audit.Actions, ", "))
	}
	if err := checkText("query", "target", in.Target); err != nil {
		return nil, err
	}
	pr := principal(ctx)
	f := audit.Filter{Action: in.Action, Target: in.Target, Limit: in.size() + 1}
	people := pr.ReadsPeople()
	if !people {
		f.Agent = &audit.AgentView{Wallets: pr.Wallets, OwnKeys: auth.OwnKeyActors(s.DB, pr)}
	}
	if in.Cursor != "" {
		seq, err := parseSeqCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		f.BeforeSeq = seq
	}
	es, err := audit.List(ctx, s.DB, pr.AccountID, f)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &auditOutput{}
	out.Body.Entries, out.Body.NextCursor = page(es, in.size(), func(e *audit.Record) string { return seqCursor(e.Seq) },
		func(e *audit.Record) AuditEntry {
			entry := auditEntryOf(e)
			if !people {
				entry.Actor, entry.Details = hidePerson(entry.Actor), hidePeople(entry.Details)
			}
			return entry
		})
	return out, nil
}

func auditEntryOf(e *audit.Record) AuditEntry {
	return AuditEntry{
		ID: e.ID.String(), Seq: e.Seq, At: e.At.UTC(), Actor: e.Actor, Action: e.Action, Target: e.Target,
		Details: e.Details, PrevHash: hex.EncodeToString(e.PrevHash), Hash: hex.EncodeToString(e.Hash),
	}
}

// hidePerson is an actor as agent keys read it: a person (user:<address>,
// slack:<user id>) by kind only; keys and system as they are.
func hidePerson(actor string) string {
	if kind, _, ok := strings.Cut(actor, ":"); ok && (kind == "user" || kind == "slack") {
		return kind
	}
	return actor
}

// personInJSON is a person's actor id as a whole JSON string. Addresses
// and Slack ids need no escaping, so the pattern is their exact bytes; a
// text that merely contains one is escaped around it (\") and not matched.
var personInJSON = regexp.MustCompile(`"(user|slack):[A-Za-z0-9]+"`)

// hidePeople is details as agent keys read them: every string that names
// a person (a system rejection's approved_by, say) by kind only.
func hidePeople(details json.RawMessage) json.RawMessage {
	return personInJSON.ReplaceAll(details, []byte(`"$1"`))
}

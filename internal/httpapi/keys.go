package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
)

// KeyAccess is what a key may do: its role and wallet scope.
type KeyAccess struct {
	Role      string   `json:"role" enum:"agent,admin" doc:"admin: may do everything, approve payments included. agent: may send, preview, read and tighten (never loosen) its wallets' policies, freeze and reject; see docs/permissions.md." example:"agent"`
	WalletIDs []string `json:"wallet_ids" nullable:"true" doc:"The wallets an agent key reaches (others answer 404 and are left out of lists); null reaches every wallet of the account." example:"[\"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21\"]"`
	Label     *string  `json:"label" nullable:"true" doc:"A name for humans, or null." example:"research-bot production"`
	// Derived from the role; kept for clients of the first version.
	CanApprove bool `json:"can_approve" doc:"Whether the key may approve payments: true for admin keys, false for agent keys." example:"false"`
}

func accessOf(k *auth.APIKey) KeyAccess {
	a := KeyAccess{Role: string(k.Role), Label: k.Label, CanApprove: k.CanApprove()}
	if k.Wallets != nil {
		a.WalletIDs = make([]string, len(k.Wallets))
		for i, id := range k.Wallets {
			a.WalletIDs[i] = id.String()
		}
	}
	return a
}

// Key is an API key as listed: never the key itself.
type Key struct {
	ID     string `json:"id" doc:"The key's id (key_…)." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
	Prefix string `json:"prefix" doc:"The key's first characters, to recognize it." example:"svc_test_4vJ9JU"`
	KeyAccess
	CreatedAt  time.Time  `json:"created_at" doc:"Creation time, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	LastUsedAt *time.Time `json:"last_used_at" nullable:"true" doc:"When the key last authenticated a request (to the minute), or null if never." example:"2026-04-02T08:30:00Z"`
	RevokedAt  *time.Time `json:"revoked_at" nullable:"true" doc:"When the key was revoked or rotated away; null while it works." example:"2026-04-03T09:00:00Z"`
	ReplacedBy *string    `json:"replaced_by" nullable:"true" doc:"The key a rotation made in its place, or null." example:"key_2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"`
	CreatedBy  *string    `json:"created_by" nullable:"true" doc:"Who made the key: a key (key_…; once that key is rotated, its successor, which manages it) or a dashboard user (user:<address>); null for keys of the command line. A key descends from its creator (and from whoever rotated it): it may not approve their payments, an admin key's payments may not be approved by them, and removing the user revokes it. Agent keys read a person as user, without the address." example:"user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
}

func creatorSeenBy(pr auth.Principal, k *auth.APIKey) *string {
	c := k.Creator()
	if c == "" {
		return nil
	}
	if !pr.ReadsPeople() {
		c = hidePerson(c)
	}
	return &c
}

// keyOf is k as pr reads it: agent keys read the person who made a key as
// user, without the address (see hidePerson).
func keyOf(pr auth.Principal, k *auth.APIKey) Key {
	out := Key{ID: auth.KeyActorID(k.ID), Prefix: k.Prefix, KeyAccess: accessOf(k), CreatedAt: k.CreatedAt.UTC(),
		LastUsedAt: utc(k.LastUsedAt), RevokedAt: utc(k.RevokedAt), CreatedBy: creatorSeenBy(pr, k)}
	if k.ReplacedBy.Valid {
		r := auth.KeyActorID(k.ReplacedBy.UUID)
		out.ReplacedBy = &r
	}
	return out
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// NewKey is a key as made: the only answer that holds the full key.
type NewKey struct {
	ID        string    `json:"id" doc:"The key's id (key_…): how audit entries and approvals name it." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
	Key       string    `json:"key" doc:"The full key. Shown only now: only its hash is stored." example:"svc_test_4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi"`
	Prefix    string    `json:"prefix" doc:"The key's first characters, to recognize it later." example:"svc_test_4vJ9JU"`
	CreatedAt time.Time `json:"created_at" doc:"Creation time, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	KeyAccess
	Replaces  *string `json:"replaces,omitempty" doc:"On rotation: the key this one replaces, now revoked; the new key keeps its role, scope, label and creator." example:"key_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	CreatedBy *string `json:"created_by" nullable:"true" doc:"Who made the key: a key (key_…; once that key is rotated, its successor, which manages it) or a dashboard user (user:<address>); null for keys of the command line. A key descends from its creator (and from whoever rotated it): it may not approve their payments, an admin key's payments may not be approved by them, and removing the user revokes it. Agent keys read a person as user, without the address." example:"user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
}

type createKeyInput struct {
	Body *struct {
		Role      *string  `json:"role,omitempty" enum:"agent,admin" doc:"agent (the default) or admin. Only an admin key may create an admin key." example:"agent"`
		WalletIDs []string `json:"wallet_ids,omitempty" nullable:"true" minItems:"1" maxItems:"1000" doc:"Limit an agent key to these wallets of the account. Omitted: every wallet, or, from a key limited to some wallets, that key's wallets (a key never gives more than it has)." example:"[\"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21\"]"`
		Label     *string  `json:"label,omitempty" maxLength:"100" doc:"A name for humans, 1 to 100 characters, without control or invisible formatting characters (bidi, zero-width)." example:"research-bot production"`
	}
}

// spec reads a key request; a malformed wallet id is a 422 naming it.
func (in *createKeyInput) spec() (auth.KeySpec, error) {
	var spec auth.KeySpec
	if in.Body == nil {
		return spec, nil
	}
	if in.Body.Role != nil {
		spec.Role = auth.Role(*in.Body.Role)
	}
	spec.Label = in.Body.Label
	if in.Body.WalletIDs != nil {
		spec.Wallets = make(auth.WalletScope, len(in.Body.WalletIDs))
		for i, raw := range in.Body.WalletIDs {
			id, err := uuid.Parse(raw)
			if err != nil {
				return spec, fieldError(fmt.Sprintf("wallet_ids[%d]", i), "must be a wallet id (UUID)")
			}
			spec.Wallets[i] = id
		}
	}
	return spec, nil
}

type newKeyOutput struct {
	Body NewKey
}

type keyIDInput struct {
	ID string `path:"id" doc:"Key id (key_…)." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
}

type keyOutput struct {
	Body Key
}

type listKeysOutput struct {
	Body struct {
		Keys       []Key   `json:"keys" doc:"The account's keys, revoked ones included, newest first."`
		NextCursor *string `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

func (s *server) registerKeys(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-keys",
		Method:      http.MethodGet,
		Path:        Prefix + "/keys",
		Summary:     "List API keys",
		Description: "The account's keys, revoked ones included, newest first: id, prefix, role, scope, label, created, last used, revoked. Never the key itself. An agent key lists only itself and the keys it created.",
		Tags:        []string{"Keys"},
		Errors:      []int{400, 401, 422},
	}, s.listKeys)

	huma.Register(api, huma.Operation{
		OperationID: "create-key",
		Method:      http.MethodPost,
		Path:        Prefix + "/keys",
		Summary:     "Create an API key",
		Description: "A new key of the calling key's account, an agent key unless the body asks for an admin key (which only an admin key may create, 403 otherwise). " +
			"An agent key may send, read, tighten its wallets' policies, freeze and reject, but never approve a payment or loosen a rule " +
			"(otherwise an agent could mint a key and approve its own sends); `wallet_ids` limits it to some wallets. " +
			"A new key descends from its creator (`created_by`): it never approves a payment its creator, or a key or person its creator descends from, requested; " +
			"a key made by a dashboard user is revoked when that user is removed. " +
			"A key limited to some wallets creates keys only within them (403 otherwise). The full key is in this answer only. " +
			"An account holds at most 100 live agent keys, and agent keys may have created at most 20 live keys by default (409 past either: revoke one first; admin keys and owners are not held to the second).",
		Tags:          []string{"Keys"},
		DefaultStatus: http.StatusCreated,
		MaxBodyBytes:  MaxBodyBytes + 1,
		Errors:        []int{400, 401, 403, 409, 413, 422},
	}, s.createKey)

	huma.Register(api, huma.Operation{
		OperationID: "rotate-key",
		Method:      http.MethodPost,
		Path:        Prefix + "/keys/{id}/rotate",
		Summary:     "Rotate an API key",
		Description: "Revokes the key at once (refused from the next request on) and returns its replacement, of the same kind, shown only in this answer. " +
			"The replacement keeps the key's role, wallet scope, label, creator and lineage (so it cannot approve what the old key requested). " +
			"A key may rotate itself. An agent key may rotate only itself and the keys it created (403 otherwise; the keys it created pass to its successor); admin keys may rotate any key. 409 when the key is already revoked.",
		Tags:   []string{"Keys"},
		Errors: []int{401, 403, 404, 409},
	}, s.rotateKey)

	huma.Register(api, huma.Operation{
		OperationID: "revoke-key",
		Method:      http.MethodDelete,
		Path:        Prefix + "/keys/{id}",
		Summary:     "Revoke an API key",
		Description: "The key is refused from the next request on. Answers the key with `revoked_at`; revoking a revoked key changes nothing. " +
			"An agent key may revoke only itself and the keys it created (403 otherwise); admin keys may revoke any key.",
		Tags:   []string{"Keys"},
		Errors: []int{401, 403, 404},
	}, s.revokeKey)
}

func (s *server) listKeys(ctx context.Context, in *PageQuery) (*listKeysOutput, error) {
	n := in.size()
	q := auth.KeyPage{Limit: n + 1}
	if in.Cursor != "" {
		at, id, err := parseTimeCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		q.AfterTime, q.AfterID = at, id
	}
	pr := principal(ctx)
	ks, err := auth.ListKeys(ctx, s.DB, pr, q)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listKeysOutput{}
	out.Body.Keys, out.Body.NextCursor = page(ks, n, func(k *auth.APIKey) string { return timeCursor(k.CreatedAt, k.ID) },
		func(k *auth.APIKey) Key { return keyOf(pr, k) })
	return out, nil
}

func (s *server) createKey(ctx context.Context, in *createKeyInput) (*newKeyOutput, error) {
	spec, err := in.spec()
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	var k auth.APIKey
	var secret string
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		k, secret, err = auth.CreateKeyBy(ctx, tx, pr, spec, cmp.Or(s.MaxKeysByAgents, auth.DefaultMaxKeysByAgents))
		if err != nil {
			return err
		}
		id := auth.KeyActorID(k.ID)
		a := accessOf(&k)
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: pr.AccountID,
			At:        k.CreatedAt,
			Actor:     audit.Actor(pr.ActorID()),
			Action:    audit.ActionKeyCreated,
			Target:    "key:" + id,
			Details:   map[string]any{"key_id": id, "prefix": k.Prefix, "role": a.Role, "wallet_ids": a.WalletIDs, "label": a.Label, "ancestry": k.Ancestry()},
		})
	})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "api key created", "key_id", k.ID, "by", pr.ActorID())
	return &newKeyOutput{Body: newKeyOf(pr, &k, secret)}, nil
}

func newKeyOf(pr auth.Principal, k *auth.APIKey, secret string) NewKey {
	return NewKey{ID: auth.KeyActorID(k.ID), Key: secret, Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC(), KeyAccess: accessOf(k), CreatedBy: creatorSeenBy(pr, k)}
}

// parseKeyID reads a key id: key_<uuid> as the API prints it, or the bare
// uuid.
func parseKeyID(s string) (uuid.UUID, bool) {
	return parseID(strings.TrimPrefix(s, "key_"))
}

func (s *server) rotateKey(ctx context.Context, in *keyIDInput) (*newKeyOutput, error) {
	id, ok := parseKeyID(in.ID)
	if !ok {
		return nil, s.fail(ctx, auth.ErrKeyNotFound)
	}
	pr := principal(ctx)
	var old, fresh auth.APIKey
	var secret string
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		old, fresh, secret, err = auth.Rotate(ctx, tx, pr, id)
		if err != nil {
			return err
		}
		oldID, newID := auth.KeyActorID(old.ID), auth.KeyActorID(fresh.ID)
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: pr.AccountID,
			At:        fresh.CreatedAt,
			Actor:     audit.Actor(pr.ActorID()),
			Action:    audit.ActionKeyRotated,
			Target:    "key:" + oldID,
			Details:   map[string]any{"key_id": oldID, "replaced_by": newID, "prefix": fresh.Prefix, "role": fresh.Role},
		})
	})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "api key rotated", "key_id", old.ID, "replaced_by", fresh.ID, "by", pr.ActorID())
	out := &newKeyOutput{Body: newKeyOf(pr, &fresh, secret)}
	replaced := auth.KeyActorID(old.ID)
	out.Body.Replaces = &replaced
	return out, nil
}

func (s *server) revokeKey(ctx context.Context, in *keyIDInput) (*keyOutput, error) {
	id, ok := parseKeyID(in.ID)
	if !ok {
		return nil, s.fail(ctx, auth.ErrKeyNotFound)
	}
	pr := principal(ctx)
	var k auth.APIKey
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var changed bool
		var err error
		k, changed, err = auth.Revoke(ctx, tx, pr, id)
		if err != nil || !changed {
			return err
		}
		kid := auth.KeyActorID(k.ID)
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: pr.AccountID,
			At:        *k.RevokedAt,
			Actor:     audit.Actor(pr.ActorID()),
			Action:    audit.ActionKeyRevoked,
			Target:    "key:" + kid,
			Details:   map[string]any{"key_id": kid, "prefix": k.Prefix},
		})
	})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "api key revoked", "key_id", k.ID, "by", pr.ActorID())
	return &keyOutput{Body: keyOf(pr, &k)}, nil
}

// keyErr maps the key rules' refusals; nil when err is not one of them.
func keyErr(err error) *Error {
	switch {
	case errors.Is(err, auth.ErrKeyNotFound):
		return errorf(http.StatusNotFound, "key not found")
	case errors.Is(err, auth.ErrKeyRevoked):
		return errorf(http.StatusConflict, "key is already revoked")
	case errors.Is(err, auth.ErrTooManyKeys):
		return errorf(http.StatusConflict, auth.ErrTooManyKeys.Error())
	case errors.Is(err, auth.ErrUnauthorized):
		// The creating key was revoked, or the user removed, while the
		// request waited: as if it had come a moment later.
		return errorf(http.StatusUnauthorized, "Unauthorized")
	}
	if tooMany := (*auth.TooManyByAgentsError)(nil); errors.As(err, &tooMany) {
		return errorf(http.StatusConflict, tooMany.Error())
	}
	return nil
}

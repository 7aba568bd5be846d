package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// authorize applies the permission table (auth.Permissions) to every
// operation before its handler runs: an operation the principal's role may
// not use answers 403 naming what is missing, and changes nothing but the
// audit entry of the attempt. Finer rules (tighten only, own keys, wallet
// scope) are applied by the handlers, from the same table.
func (s *server) authorize(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		pr := principal(ctx.Context())
		op := ctx.Operation()
		if auth.Can(pr, op.OperationID) != auth.Refused {
			next(ctx)
			return
		}
		d := auth.Deny(pr, op.OperationID)
		// Name the wallet tried, so its history shows the attempt.
		if id, err := uuid.Parse(ctx.Param("id")); err == nil &&
			(strings.HasPrefix(op.Path, Prefix+"/agents/{id}") || strings.HasPrefix(op.Path, Prefix+"/wallets/{id}")) {
			d.Target = wallet.Target(id)
		}
		e := s.denied(ctx.Context(), d)
		huma.WriteErr(api, ctx, e.status, e.Message)
	}
}

// denied answers a refusal by the permission table or the requester rule
// (403 with its reason) and records it as a permission.denied audit entry,
// so humans see an agent trying. The entry is written on its own: the
// refused change, if any, was rolled back.
func (s *server) denied(ctx context.Context, d *auth.Denied) *Error {
	pr, ok := ctx.Value(principalKey{}).(auth.Principal)
	if !ok { // not an API key's request: nothing to name in the log
		return errorf(http.StatusForbidden, d.Reason)
	}
	target := d.Target
	if target == "" {
		target = "key:" + pr.ActorID()
	}
	details := map[string]any{"operation": d.Op, "key_id": pr.ActorID(), "role": pr.Role, "reason": d.Reason}
	if id, ok := strings.CutPrefix(target, "wallet:"); ok {
		details["wallet_id"] = id
	}
	if rid, ok := ctx.Value(requestIDKey{}).(string); ok {
		details["request_id"] = rid
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := audit.Append(bg, s.DB, audit.Entry{
		AccountID: pr.AccountID,
		At:        time.Now(),
		Actor:     audit.Actor(pr.ActorID()),
		Action:    audit.ActionPermissionDenied,
		Target:    target,
		Details:   details,
	}); err != nil {
		s.log.ErrorContext(ctx, "audit a refusal", "operation", d.Op, "err", err)
	}
	s.log.InfoContext(ctx, "permission denied", "operation", d.Op, "by", pr.ActorID(), "reason", d.Reason)
	return errorf(http.StatusForbidden, d.Reason)
}

// walletID parses a wallet id the caller reaches: a malformed id, or a
// wallet outside the key's scope, is not found (like another account's).
func (s *server) walletID(ctx context.Context, raw string) (uuid.UUID, error) {
	id, ok := parseID(raw)
	if !ok || !principal(ctx).Reaches(id) {
		return uuid.Nil, s.fail(ctx, wallet.ErrNotFound)
	}
	return id, nil
}

// documentPermissions adds to every operation the permission table
// refuses to some role (or limits) its 403 answer, in the document,
// saying to whom (shaped like its 401).
func documentPermissions(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Patch, item.Put, item.Delete} {
			if op == nil || op.Responses["401"] == nil {
				continue
			}
			rule := auth.Permissions[op.OperationID]
			var limits []string
			for _, role := range auth.Roles {
				if a := rule.Access[role]; a != auth.Allowed {
					limits = append(limits, fmt.Sprintf("%s keys: %s", role, a))
				}
			}
			// A note alone limits what is read, not who may call.
			if rule.Note != "" && len(limits) > 0 {
				limits = append(limits, rule.Note)
			}
			if len(limits) == 0 {
				continue
			}
			text := "Refused by the permission table (docs/permissions.md), nothing changed: " + strings.Join(limits, "; ") + "."
			if r := op.Responses["403"]; r != nil {
				if r.Description == http.StatusText(http.StatusForbidden) {
					r.Description = text
				} else {
					r.Description += " " + text
				}
				continue
			}
			r := *op.Responses["401"]
			r.Description = text
			op.Responses["403"] = &r
		}
	}
}

package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
)

type newKeyOutput struct {
	Body struct {
		ID        string    `json:"id" doc:"The key's id (key_…): how audit entries and approvals name it." example:"key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"`
		Key       string    `json:"key" doc:"The full key. Shown only now: only its hash is stored." example:"svc_test_4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi"`
		Prefix    string    `json:"prefix" doc:"The key's first characters, to recognize it later." example:"svc_test_4vJ9JU"`
		CreatedAt time.Time `json:"created_at" doc:"Creation time, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
		// Always false here; said so that nobody hands such a key to a
		// human approver expecting it to work.
		CanApprove bool `json:"can_approve" doc:"Whether the key may approve payments: keys created through the API are agent keys and never may (operator keys come from the dashboard or from api keys create)." example:"false"`
	}
}

func (s *server) registerKeys(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "create-key",
		Method:      http.MethodPost,
		Path:        Prefix + "/keys",
		Summary:     "Create an API key",
		Description: "A new agent key of the calling key's account: it reaches every wallet of the account, may send and reject, but never approve a payment " +
			"(otherwise an agent could mint a key and approve its own sends). The full key is in this answer only.",
		Tags:          []string{"Keys"},
		DefaultStatus: http.StatusCreated,
		Errors:        []int{401},
	}, s.createKey)
}

func (s *server) createKey(ctx context.Context, _ *struct{}) (*newKeyOutput, error) {
	pr := principal(ctx)
	var k auth.APIKey
	var secret string
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		k, secret, err = auth.CreateAgentKey(ctx, tx, auth.Account{ID: pr.AccountID, Network: pr.Network}, pr.KeyID)
		if err != nil {
			return err
		}
		id := auth.KeyActorID(k.ID)
		return audit.Append(ctx, tx, pr.AccountID, k.CreatedAt, pr.ActorID(), audit.ActionKeyCreated, "key:"+id,
			map[string]any{"key_id": id, "prefix": k.Prefix, "can_approve": false})
	})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "api key created", "key_id", k.ID, "by", pr.ActorID())
	out := &newKeyOutput{}
	out.Body.ID, out.Body.Key, out.Body.Prefix, out.Body.CreatedAt = auth.KeyActorID(k.ID), secret, k.Prefix, k.CreatedAt.UTC()
	return out, nil
}

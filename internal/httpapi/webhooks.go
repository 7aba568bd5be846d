package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// WebhookEndpoint is a receiver of the account's events.
type WebhookEndpoint struct {
	ID             string    `json:"id" format:"uuid" doc:"Endpoint id." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	URL            string    `json:"url" doc:"Where events are POSTed. A Slack endpoint's URL is masked (https://hooks.slack.com/…/abcd) for viewers and approvers: it lets its holder post into the channel." example:"https://example.com/hooks/agentwallet"`
	Format         string    `json:"format" enum:"json,slack" doc:"json: the signed JSON envelope; slack: a Slack message." example:"json"`
	Events         []string  `json:"events" doc:"The event kinds it receives." example:"[\"tx.sent\",\"approval.pending\"]"`
	Description    *string   `json:"description" nullable:"true" doc:"A note for humans, or null." example:"payments backend"`
	Enabled        bool      `json:"enabled" doc:"A disabled endpoint receives nothing new." example:"true"`
	SlackApprovers []string  `json:"slack_approvers" doc:"Slack format: the Slack user ids whose Approve/Reject buttons may act; empty means anyone in the channel." example:"[\"U024BE7LH\"]"`
	CreatedAt      time.Time `json:"created_at" doc:"Creation time, ISO 8601 UTC." example:"2026-06-02T12:00:00Z"`
	UpdatedAt      time.Time `json:"updated_at" doc:"Last change, ISO 8601 UTC." example:"2026-06-02T12:00:00Z"`
	// PreviousSecretExpiresAt is set during a rotation.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at" nullable:"true" doc:"Until when the previous secret still signs beside the new one (after a rotation), or null." example:"2026-06-03T12:00:00Z"`
}

// hookURL is an endpoint's URL as pr may read it: a Slack incoming-webhook
// URL lets its holder post into the approvers' channel as the app, so only
// owners and admin keys (who may change it anyway) read it whole; viewers
// and approvers get it masked (webhook.MaskURL).
func hookURL(pr auth.Principal, format, raw string) string {
	if format != webhook.FormatSlack || pr.Role == auth.RoleOwner || pr.Role == auth.RoleAdmin {
		return raw
	}
	return webhook.MaskURL(raw)
}

// endpointOf is e as the caller of ctx may read it.
func endpointOf(ctx context.Context, e *webhook.Endpoint) WebhookEndpoint {
	out := WebhookEndpoint{
		ID: e.ID.String(), URL: hookURL(principal(ctx), e.Format, e.URL), Format: e.Format, Events: e.Events, Description: e.Description,
		Enabled: e.Enabled, SlackApprovers: e.SlackApprovers, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
	}
	if out.Events == nil {
		out.Events = []string{}
	}
	if out.SlackApprovers == nil {
		out.SlackApprovers = []string{}
	}
	if !e.PreviousExpiresAt.IsZero() && e.PreviousExpiresAt.After(time.Now()) {
		t := e.PreviousExpiresAt.Time.UTC()
		out.PreviousSecretExpiresAt = &t
	}
	return out
}

// EndpointWithSecret is an endpoint as created or rotated: the only time
// its secret is shown.
type EndpointWithSecret struct {
	WebhookEndpoint
	Secret string `json:"secret" doc:"The signing secret, shown only now. Verify X-Service-Signature (sha256=<hex HMAC-SHA256 of the raw body keyed by this string>) or the Standard Webhooks headers." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
}

type endpointBody struct {
	URL            *string  `json:"url,omitempty" maxLength:"2048" doc:"Where to POST events: https (http is allowed for test accounts' local receivers)." example:"https://example.com/hooks/agentwallet"`
	Format         *string  `json:"format,omitempty" enum:"json,slack" doc:"Payload format; default json. slack: a Slack incoming-webhook URL receives Block Kit messages, with Approve/Reject buttons for approval.pending (the Slack app's interactivity URL must be /integrations/slack/interactions)." example:"json"`
	Events         []string `json:"events,omitempty" nullable:"true" maxItems:"20" doc:"Event kinds to receive: tx.sent, tx.received, tx.receive_failed, wallet.unexplained_outflow, wallet.balance_mismatch, tx.blocked, tx.failed, approval.pending, approval.vote, approval.approved, approval.rejected, approval.expired, x402.expired, mpp.expired, user.added. approval.vote: a person approved a payment that needs several (the wallet's approvals_required), short of the quorum; data approval_id, wallet_id, amount, to, by, approvals, approvals_needed (the approve that completes it is approval.approved, once sent). Every approval event also carries approvals ([{by, at, note}], oldest first) and approvals_needed. tx.failed (not in the first version's list): a payment answered sent ended failed on chain or expired unseen, nothing spent; data wallet_id, signature, amount, to, memo, reason, and approval_id when it came from an approval. x402.expired: a signed x402 payment whose blockhash expired before the seller settled it (or that failed on chain), its reservation released; data payment_id, wallet_id, amount, pay_to, resource, state, reason, signature. mpp.expired: the same of a signed MPP payment the seller did not broadcast before its blockhash expired. tx.received: money came into a wallet (an asset of GET /assets to any of its token accounts, or SOL), confirmed, announced once; data wallet_id, transaction_id, signature, asset (lower case: usdc, eurc, pyusd, sol), symbol (upper case: USDC, EURC, PYUSD, SOL), amount (in that asset's units), from (the sender), slot. tx.receive_failed: a deposit announced by tx.received was dropped by a fork (its transaction gone from the chain once its blockhash expired), marked failed; data as tx.received's and reason. wallet.unexplained_outflow: money left a wallet in a transaction the service did not make (its key used elsewhere, or a delegate such as a Token-2022 mint's permanent delegate); data wallet_id, signature, asset, symbol, amount (in that asset's units), to, slot, and delegate (who signed instead of the wallet) when the wallet did not sign. wallet.balance_mismatch: a wallet's balance of an asset read on chain differs from its ledger at the same slot (daily snapshot); data wallet_id, snapshot_id, asset, symbol, chain, ledger, difference (chain minus ledger), slot. user.added: a person was made a user of the account, whoever added them (an owner, an admin key, or the operator's api users add), so every owner hears of a new owner; data address, role, added_by (user:<address>, key_<id>, or system) and via (the command line's name, when it added them); also sent when a user is promoted to owner, with promoted_from (the role before). An x402 or MPP payment's tx.sent, tx.blocked and approval.pending also carry kind (x402 or mpp), resource, payment_id and (approval.pending) description." example:"[\"tx.sent\",\"approval.pending\"]"`
	Description    *string  `json:"description,omitempty" maxLength:"500" doc:"A note for humans, without control or invisible formatting characters (newlines, bidi, zero-width)." example:"payments backend"`
	Enabled        *bool    `json:"enabled,omitempty" doc:"Default true." example:"true"`
	SlackApprovers []string `json:"slack_approvers,omitempty" nullable:"true" maxItems:"100" doc:"Slack format: only these Slack user ids may press Approve/Reject; empty means anyone in the channel." example:"[\"U024BE7LH\"]"`
}

func (b *endpointBody) settings() webhook.Settings {
	return webhook.Settings{URL: b.URL, Format: b.Format, Events: b.Events, Description: b.Description, Enabled: b.Enabled, SlackApprovers: b.SlackApprovers}
}

type createEndpointInput struct {
	Body endpointBody
}

type endpointIDInput struct {
	ID string `path:"id" doc:"Endpoint id." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
}

type updateEndpointInput struct {
	ID   string `path:"id" doc:"Endpoint id." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	Body endpointBody
}

type endpointOutput struct{ Body WebhookEndpoint }

type endpointSecretOutput struct{ Body EndpointWithSecret }

type listEndpointsOutput struct {
	Body struct {
		Endpoints []WebhookEndpoint `json:"endpoints" doc:"The account's endpoints, newest first."`
	}
}

// DeliveryOut is one event's delivery to one endpoint.
type DeliveryOut struct {
	ID            string     `json:"id" format:"uuid" doc:"Delivery id (the X-Service-Delivery header)." example:"3c2b1a0f-9e8d-4c7b-a6f5-e4d3c2b1a0f9"`
	EndpointID    string     `json:"endpoint_id" format:"uuid" doc:"The endpoint." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	EventID       string     `json:"event_id" doc:"The event (evt_…); a replay carries the same one." example:"evt_1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9"`
	Event         string     `json:"event" doc:"The event kind." example:"tx.sent"`
	Status        string     `json:"status" enum:"pending,succeeded,failed" doc:"pending: being attempted (up to 6 times over about 7 hours); succeeded: a 2xx answer within 10 s; failed: every attempt failed, or the endpoint was disabled." example:"succeeded"`
	Attempts      int        `json:"attempts" doc:"POSTs made so far." example:"1"`
	ReplayOf      *string    `json:"replay_of" nullable:"true" doc:"The delivery this one replays, or null." example:"null"`
	CreatedAt     time.Time  `json:"created_at" doc:"When it was created, ISO 8601 UTC." example:"2026-06-02T12:00:00Z"`
	LastAttemptAt *time.Time `json:"last_attempt_at" nullable:"true" doc:"When it was last attempted, or null." example:"2026-06-02T12:00:00Z"`
	CompletedAt   *time.Time `json:"completed_at" nullable:"true" doc:"When it succeeded or failed for good, or null." example:"2026-06-02T12:00:01Z"`
}

func deliveryOf(d *webhook.Delivery) DeliveryOut {
	out := DeliveryOut{
		ID: d.ID.String(), EndpointID: d.EndpointID.String(), EventID: webhook.PublicEventID(d.EventID), Event: d.EventKind,
		Status: d.Status, Attempts: d.Attempts, CreatedAt: d.CreatedAt.UTC(),
		LastAttemptAt: optTime(d.LastAttemptAt.Time), CompletedAt: optTime(d.CompletedAt.Time),
	}
	if d.ReplayOf.Valid {
		r := d.ReplayOf.UUID.String()
		out.ReplayOf = &r
	}
	return out
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// AttemptOut is one POST of a delivery.
type AttemptOut struct {
	N            int       `json:"n" doc:"Attempt number, from 1." example:"1"`
	At           time.Time `json:"at" doc:"When it started, ISO 8601 UTC." example:"2026-06-02T12:00:00Z"`
	StatusCode   *int      `json:"status_code" nullable:"true" doc:"The answer's HTTP status, or null when there was none." example:"200"`
	LatencyMs    int       `json:"latency_ms" doc:"Time to the answer (or the failure), in milliseconds." example:"84"`
	Error        *string   `json:"error" nullable:"true" doc:"Why no answer came (timeout, refused connection, …), or null." example:"null"`
	ResponseHead *string   `json:"response_head" nullable:"true" doc:"The first KiB of the answer's body, or null." example:"ok"`
}

type deliveryOutput struct {
	Body struct {
		DeliveryOut
		AttemptLog []AttemptOut `json:"attempt_log" doc:"Every attempt, oldest first."`
		// The envelope, not a Slack message: a Slack body carries the
		// endpoint's button token, which readers of the log must not see.
		Payload json.RawMessage `json:"payload" doc:"The event as the JSON format POSTs it ({event, event_id, timestamp, data}, the bytes that are signed); a Slack endpoint receives a message rendered from it." example:"{\"event\":\"tx.sent\",\"event_id\":\"evt_1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9\",\"timestamp\":\"2026-06-02T12:00:00Z\",\"data\":{}}"`
	}
}

type listDeliveriesInput struct {
	ID     string `path:"id" doc:"Endpoint id." example:"7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"`
	Status string `query:"status" enum:"pending,succeeded,failed" doc:"Only deliveries with this status." example:"failed"`
	PageQuery
}

type listDeliveriesOutput struct {
	Body struct {
		Deliveries []DeliveryOut `json:"deliveries" doc:"Newest first."`
		NextCursor *string       `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

type replayOutput struct{ Body DeliveryOut }

func (s *server) registerWebhooks(api huma.API) {
	const tag = "Webhooks"
	huma.Register(api, huma.Operation{
		OperationID: "create-webhook-endpoint", Method: http.MethodPost, Path: Prefix + "/webhook-endpoints",
		Summary: "Create a webhook endpoint", Tags: []string{tag}, DefaultStatus: http.StatusCreated, MaxBodyBytes: MaxBodyBytes + 1,
		Description: "Subscribes a URL to event kinds. The answer carries the signing secret, shown only this once. A `webhook.test` event is delivered to it at once. An account holds at most 50 live endpoints by default (409 past that).",
		Errors:      []int{400, 401, 409, 413, 422, 503},
	}, s.createEndpoint)
	huma.Register(api, huma.Operation{
		OperationID: "list-webhook-endpoints", Method: http.MethodGet, Path: Prefix + "/webhook-endpoints",
		Summary: "List webhook endpoints", Tags: []string{tag}, Errors: []int{401},
	}, s.listEndpoints)
	huma.Register(api, huma.Operation{
		OperationID: "get-webhook-endpoint", Method: http.MethodGet, Path: Prefix + "/webhook-endpoints/{id}",
		Summary: "Get a webhook endpoint", Tags: []string{tag}, Errors: []int{401, 404},
	}, s.getEndpoint)
	huma.Register(api, huma.Operation{
		OperationID: "update-webhook-endpoint", Method: http.MethodPatch, Path: Prefix + "/webhook-endpoints/{id}",
		Summary: "Change a webhook endpoint", Tags: []string{tag}, MaxBodyBytes: MaxBodyBytes + 1,
		Description: "Changes the given fields (url, format, events, description, enabled); a `webhook.test` event is delivered when it is enabled. A disabled endpoint receives nothing new.",
		Errors:      []int{400, 401, 404, 413, 422},
	}, s.updateEndpoint)
	huma.Register(api, huma.Operation{
		OperationID: "delete-webhook-endpoint", Method: http.MethodDelete, Path: Prefix + "/webhook-endpoints/{id}",
		Summary: "Delete a webhook endpoint", Tags: []string{tag}, DefaultStatus: http.StatusNoContent,
		Description: "It receives nothing new; its delivery log stays readable.",
		Errors:      []int{401, 404},
	}, s.deleteEndpoint)
	huma.Register(api, huma.Operation{
		OperationID: "rotate-webhook-secret", Method: http.MethodPost, Path: Prefix + "/webhook-endpoints/{id}/rotate-secret",
		Summary: "Rotate an endpoint's signing secret", Tags: []string{tag},
		Description: "Answers the new secret (shown only now). For 24 hours the old secret keeps signing beside it (X-Service-Signature-Previous and a second webhook-signature), so receivers can switch without losing events.",
		Errors:      []int{401, 404, 503},
	}, s.rotateSecret)
	huma.Register(api, huma.Operation{
		OperationID: "list-deliveries", Method: http.MethodGet, Path: Prefix + "/webhook-endpoints/{id}/deliveries",
		Summary: "List an endpoint's deliveries", Tags: []string{tag}, Errors: []int{400, 401, 404, 422},
	}, s.listDeliveries)
	huma.Register(api, huma.Operation{
		OperationID: "get-delivery", Method: http.MethodGet, Path: Prefix + "/deliveries/{id}",
		Summary: "Get a delivery with its attempts", Tags: []string{tag}, Errors: []int{401, 404},
	}, s.getDelivery)
	huma.Register(api, huma.Operation{
		OperationID: "test-webhook-endpoint", Method: http.MethodPost, Path: Prefix + "/webhook-endpoints/{id}/test",
		Summary: "Send a test event", Tags: []string{tag}, DefaultStatus: http.StatusAccepted,
		Description: "Queues a `webhook.test` event to this endpoint alone, whatever kinds it subscribes to, and answers its delivery; follow it in the delivery log. 409 when the endpoint is disabled.",
		Errors:      []int{401, 404, 409},
	}, s.testEndpoint)
	huma.Register(api, huma.Operation{
		OperationID: "replay-delivery", Method: http.MethodPost, Path: Prefix + "/deliveries/{id}/replay",
		Summary: "Replay a delivery", Tags: []string{tag}, DefaultStatus: http.StatusCreated,
		Description: "A new delivery of the same event (same event_id) to the same endpoint.",
		Errors:      []int{401, 404, 409},
	}, s.replay)
}

// secretSealer is the API's sealer for signing secrets, once a running
// worker is known to hold the key it seals to (else 503: the endpoint
// could never be signed for).
func (s *server) secretSealer(ctx context.Context) (webhook.Sealer, error) {
	ws, ok := s.Sealer.(webhook.Sealer)
	if !ok {
		return nil, errorf(http.StatusServiceUnavailable, "signing secrets cannot be sealed")
	}
	if err := s.checkSealKey(ctx); err != nil {
		return nil, err
	}
	return ws, nil
}

// checkEndpointURL vets a URL being saved: https and public addresses for
// live accounts (and test accounts unless private ones are allowed).
func (s *server) checkEndpointURL(ctx context.Context, network solana.Network, b *endpointBody) error {
	if b.URL == nil {
		return nil
	}
	if err := webhook.CheckURL(ctx, *b.URL, network == solana.Mainnet, s.WebhookAllowPrivate); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

func (s *server) createEndpoint(ctx context.Context, in *createEndpointInput) (*endpointSecretOutput, error) {
	pr := principal(ctx)
	if in.Body.URL == nil {
		return nil, fieldError("url", "is required")
	}
	if in.Body.Events == nil {
		return nil, fieldError("events", "is required")
	}
	if err := s.checkEndpointURL(ctx, pr.Network, &in.Body); err != nil {
		return nil, err
	}
	sealer, err := s.secretSealer(ctx)
	if err != nil {
		return nil, err
	}
	e, secret, err := webhook.CreateEndpoint(ctx, s.DB, sealer, pr.AccountID, in.Body.settings(), cmp.Or(s.MaxWebhookEndpoints, webhook.DefaultMaxEndpoints))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "webhook endpoint created", "endpoint_id", e.ID, "by", pr.ActorID())
	return &endpointSecretOutput{Body: EndpointWithSecret{WebhookEndpoint: endpointOf(ctx, &e), Secret: secret}}, nil
}

func (s *server) listEndpoints(ctx context.Context, _ *struct{}) (*listEndpointsOutput, error) {
	es, err := webhook.ListEndpoints(ctx, s.DB, principal(ctx).AccountID)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listEndpointsOutput{}
	out.Body.Endpoints = make([]WebhookEndpoint, len(es))
	for i := range es {
		out.Body.Endpoints[i] = endpointOf(ctx, &es[i])
	}
	return out, nil
}

// endpointID parses an endpoint id; a malformed one is not found.
func (s *server) endpointID(ctx context.Context, raw string) (uuid.UUID, error) {
	id, ok := parseID(raw)
	if !ok {
		return uuid.Nil, s.fail(ctx, webhook.ErrEndpointNotFound)
	}
	return id, nil
}

func (s *server) getEndpoint(ctx context.Context, in *endpointIDInput) (*endpointOutput, error) {
	id, err := s.endpointID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	e, err := webhook.GetEndpoint(ctx, s.DB, principal(ctx).AccountID, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &endpointOutput{Body: endpointOf(ctx, &e)}, nil
}

func (s *server) updateEndpoint(ctx context.Context, in *updateEndpointInput) (*endpointOutput, error) {
	pr := principal(ctx)
	if err := s.checkEndpointURL(ctx, pr.Network, &in.Body); err != nil {
		return nil, err
	}
	id, err := s.endpointID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	e, err := webhook.UpdateEndpoint(ctx, s.DB, pr.AccountID, id, in.Body.settings())
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &endpointOutput{Body: endpointOf(ctx, &e)}, nil
}

func (s *server) deleteEndpoint(ctx context.Context, in *endpointIDInput) (*struct{}, error) {
	id, err := s.endpointID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := webhook.DeleteEndpoint(ctx, s.DB, principal(ctx).AccountID, id); err != nil {
		return nil, s.fail(ctx, err)
	}
	return nil, nil
}

func (s *server) rotateSecret(ctx context.Context, in *endpointIDInput) (*endpointSecretOutput, error) {
	id, err := s.endpointID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	sealer, err := s.secretSealer(ctx)
	if err != nil {
		return nil, err
	}
	e, secret, err := webhook.RotateSecret(ctx, s.DB, sealer, principal(ctx).AccountID, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &endpointSecretOutput{Body: EndpointWithSecret{WebhookEndpoint: endpointOf(ctx, &e), Secret: secret}}, nil
}

func (s *server) listDeliveries(ctx context.Context, in *listDeliveriesInput) (*listDeliveriesOutput, error) {
	id, err := s.endpointID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var after *webhook.DeliveryCursor
	if in.Cursor != "" {
		at, cid, err := parseTimeCursor(in.Cursor)
		if err != nil {
			return nil, err
		}
		after = &webhook.DeliveryCursor{CreatedAt: at, ID: cid}
	}
	n := in.size()
	ds, err := webhook.ListDeliveries(ctx, s.DB, principal(ctx).AccountID, id, in.Status, after, n+1)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &listDeliveriesOutput{}
	out.Body.Deliveries, out.Body.NextCursor = page(ds, n, func(d *webhook.Delivery) string { return timeCursor(d.CreatedAt, d.ID) }, deliveryOf)
	return out, nil
}

func (s *server) getDelivery(ctx context.Context, in *endpointIDInput) (*deliveryOutput, error) {
	id, ok := parseID(in.ID)
	if !ok {
		return nil, s.fail(ctx, webhook.ErrDeliveryNotFound)
	}
	d, as, err := webhook.GetDelivery(ctx, s.DB, principal(ctx).AccountID, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	ev := d.Event()
	body, err := webhook.Body(&ev)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &deliveryOutput{}
	out.Body.DeliveryOut = deliveryOf(&d)
	out.Body.Payload = body
	out.Body.AttemptLog = make([]AttemptOut, len(as))
	for i, a := range as {
		out.Body.AttemptLog[i] = AttemptOut{N: a.N, At: a.At.UTC(), StatusCode: a.StatusCode, LatencyMs: a.LatencyMs, Error: a.Error, ResponseHead: a.ResponseHead}
	}
	return out, nil
}

func (s *server) testEndpoint(ctx context.Context, in *endpointIDInput) (*replayOutput, error) {
	id, ok := parseID(in.ID)
	if !ok {
		return nil, s.fail(ctx, webhook.ErrEndpointNotFound)
	}
	d, err := webhook.SendTest(ctx, s.DB, principal(ctx).AccountID, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &replayOutput{Body: deliveryOf(&d)}, nil
}

func (s *server) replay(ctx context.Context, in *endpointIDInput) (*replayOutput, error) {
	id, ok := parseID(in.ID)
	if !ok {
		return nil, s.fail(ctx, webhook.ErrDeliveryNotFound)
	}
	d, err := webhook.Replay(ctx, s.DB, principal(ctx).AccountID, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &replayOutput{Body: deliveryOf(&d)}, nil
}

// webhookErr maps the webhook package's refusals; nil when err is not one.
func webhookErr(err error) *Error {
	var fe *webhook.FieldError
	var tooMany *webhook.TooManyError
	switch {
	case errors.Is(err, webhook.ErrEndpointNotFound):
		return errorf(http.StatusNotFound, "webhook endpoint not found")
	case errors.Is(err, webhook.ErrDeliveryNotFound):
		return errorf(http.StatusNotFound, "delivery not found")
	case errors.Is(err, webhook.ErrEndpointDisabled):
		return errorf(http.StatusConflict, "the webhook endpoint is disabled; enable it to replay")
	case errors.As(err, &fe):
		return fieldError(fe.Field, fe.Msg)
	case errors.As(err, &tooMany):
		return errorf(http.StatusConflict, tooMany.Error())
	}
	return nil
}

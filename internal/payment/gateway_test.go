package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// handoff is a payment.Handoff that runs the engine in-process (the
// worker's side), or fails like an unreachable Redis.
type handoff struct {
	eng  *payment.Engine
	fail bool
	// lost: the hand-off "fails" but a worker took it all the same.
	lost bool
}

func (h handoff) Decide(ctx context.Context, id uuid.UUID) error {
	if h.fail {
		return errors.New("redis: connection refused")
	}
	if err := h.eng.Decide(ctx, id); err != nil {
		return err
	}
	if h.lost {
		return errors.New("redis: i/o timeout")
	}
	return nil
}

func (h handoff) Execute(context.Context, uuid.UUID) error { return errors.New("not used") }

// outcomes is an outcome bus that never announces: the Gateway polls.
type outcomes struct{}

func (outcomes) Register(uuid.UUID) (<-chan *payment.Outcome, func()) { return nil, func() {} }

// The Gateway records a payment, hands its decision over and answers its
// outcome; a replay under the same Idempotency-Key answers the first
// outcome with the transaction's status; a hand-off that fails withdraws
// the request (ErrQueueUnavailable, nothing signed) unless a worker took
// it all the same, which is then answered.
func TestGateway_PayHandsOffWaitsAndWithdraws(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	request := func(key string) *payment.Request {
		r := &payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: f.w.ID, Network: solana.Devnet,
			To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: 1_000_000}
		if key != "" {
			scope := "test"
			r.IdempotencyKey, r.IdempotencyScope = &key, &scope
		}
		return r
	}
	gw := func(h handoff) *payment.Gateway {
		return &payment.Gateway{DB: f.eng.DB, Handoff: h, Outcomes: outcomes{}, Wait: 10 * time.Second}
	}

	paid, err := gw(handoff{eng: f.eng}).Pay(ctx, request("k1"))
	if err != nil || paid.Replayed || paid.Outcome.Status != payment.Sent || paid.Outcome.Signature == "" {
		t.Fatalf("pay: %+v %v", paid, err)
	}
	again, err := gw(handoff{eng: f.eng, fail: true}).Pay(ctx, request("k1"))
	if err != nil || !again.Replayed || again.Outcome.Signature != paid.Outcome.Signature || again.TransactionStatus == "" {
		t.Fatalf("replay: %+v %v", again, err)
	}

	before := f.count(t, "transactions")
	if _, err := gw(handoff{eng: f.eng, fail: true}).Pay(ctx, request("")); !errors.Is(err, payment.ErrQueueUnavailable) {
		t.Fatalf("a failed hand-off: %v, want ErrQueueUnavailable", err)
	}
	f.wantRows(t, "transactions", before)
	lost, err := gw(handoff{eng: f.eng, lost: true}).Pay(ctx, request(""))
	if err != nil || lost.Outcome.Status != payment.Sent {
		t.Fatalf("a hand-off a worker took despite the error: %+v %v", lost, err)
	}
}

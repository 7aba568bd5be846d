package analytics_test

import (
	"math"
	"slices"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/analytics"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// The range of every test: two UTC days, both included.
var (
	day1  = time.Date(2026, 4, 6, 0, 0, 0, 0, time.UTC)
	day2  = day1.AddDate(0, 0, 1)
	week  = analytics.Range{From: day1, To: day2}
	noon1 = day1.Add(12 * time.Hour)
)

type fixture struct {
	tx    bun.Tx
	acct  uuid.UUID
	w, w2 wallet.Wallet
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{tx: pgtest.TestTx(t)}
	f.acct = wallettest.Account(t, f.tx).ID
	sealer := wallettest.Sealer(t)
	f.w = wallettest.Create(t, f.tx, sealer, f.acct, "alpha")
	f.w2 = wallettest.Create(t, f.tx, sealer, f.acct, "beta")
	return f
}

// transaction inserts a transaction of wallet w made at at.
func (f *fixture) transaction(t *testing.T, w uuid.UUID, at time.Time, kind, status string, micros usdc.Micros, fee *int64) {
	t.Helper()
	id := uuid.New()
	_, err := f.tx.ExecContext(t.Context(), `INSERT INTO transactions (id, account_id, wallet_id, network, signature, kind, amount_micros,
			counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at, signed_at, fee_lamports)
		VALUES (?, ?, ?, 'devnet', ?, ?, ?, ?, ?, '\x00', 1, ?, ?, ?, ?)`,
		id, f.acct, w, "sig-"+id.String(), kind, micros, sol.NewWallet().PublicKey().String(), status, at, at, at, fee)
	if err != nil {
		t.Fatal(err)
	}
}

// request inserts a send request of wallet w, decided at at with outcome
// status (and reason when blocked); "" leaves it queued.
func (f *fixture) request(t *testing.T, w uuid.UUID, at time.Time, status, reason string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	state, outcome, decided := "queued", any(nil), any(nil)
	if status != "" {
		state, outcome, decided = "decided", map[string]any{"status": status, "reason": reason}, at
	}
	_, err := f.tx.NewRaw(`INSERT INTO send_requests (id, account_id, wallet_id, network, to_address, amount_micros, state, outcome, created_at, deadline, decided_at)
		VALUES (?, ?, ?, 'devnet', ?, 1000000, ?, ?, ?, ?, ?)`,
		id, f.acct, w, sol.NewWallet().PublicKey().String(), state, outcome, at, at.Add(time.Minute), decided).Exec(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// x402 inserts an x402 payment of wallet w signed at at, in state.
func (f *fixture) x402(t *testing.T, w uuid.UUID, at time.Time, state string, micros usdc.Micros) {
	t.Helper()
	req := f.request(t, w, at, "signed", "")
	id := uuid.New()
	_, err := f.tx.ExecContext(t.Context(), `INSERT INTO x402_payments (id, account_id, wallet_id, request_id, network, x402_version, challenge,
			choice_index, amount_micros, pay_to, asset, fee_payer, resource, memo, owner_signature, source_ata, destination_ata,
			header, payment_signature, signed_tx, last_valid_block_height, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'devnet', 2, '{}', 0, ?, 'payTo', 'asset', 'feePayer', 'https://seller.example/r', 'memo', ?, 'src', 'dst',
			'PAYMENT-SIGNATURE', 'sig', '\x00', 1, ?, ?, ?)`,
		id, f.acct, w, req, micros, "owner-"+id.String(), state, at, at)
	if err != nil {
		t.Fatal(err)
	}
}

// What counts as a wallet's spend on a day: signed transactions that did
// not fail (the daily limit's count), x402 payments signed and not yet
// landed or expired (a landed one is its transaction); the fees of the
// confirmed ones; UTC days of the range only, To included.
func TestCompute_Spend(t *testing.T) {
	t.Parallel()
	const u = usdc.Unit
	fee := func(v int64) *int64 { return &v }
	type spend struct {
		day        string
		micros     usdc.Micros
		n          int
		fee        int64
		x402Micros usdc.Micros
		x402N      int
	}
	d1, d2 := day1.Format(time.DateOnly), day2.Format(time.DateOnly)
	for _, c := range []struct {
		name   string
		insert func(*testing.T, *fixture)
		want   []spend
	}{
		{"a pending transfer", func(t *testing.T, f *fixture) { f.transaction(t, f.w.ID, noon1, "usdc", "pending", 2*u, nil) },
			[]spend{{d1, 2 * u, 1, 0, 0, 0}}},
		{"a confirmed transfer and its fee", func(t *testing.T, f *fixture) { f.transaction(t, f.w.ID, noon1, "usdc", "confirmed", 2*u, fee(5000)) },
			[]spend{{d1, 2 * u, 1, 5000, 0, 0}}},
		{"a pending transfer's fee is not yet paid", func(t *testing.T, f *fixture) { f.transaction(t, f.w.ID, noon1, "usdc", "pending", 2*u, fee(5000)) },
			[]spend{{d1, 2 * u, 1, 0, 0, 0}}},
		{"a failed transfer", func(t *testing.T, f *fixture) { f.transaction(t, f.w.ID, noon1, "usdc", "failed", 2*u, fee(5000)) },
			nil},
		{"a signed x402 payment", func(t *testing.T, f *fixture) { f.x402(t, f.w.ID, noon1, "signed", 3*u) },
			[]spend{{d1, 3 * u, 1, 0, 3 * u, 1}}},
		{"an expired x402 payment", func(t *testing.T, f *fixture) { f.x402(t, f.w.ID, noon1, "expired", 3*u) },
			nil},
		{"a landed x402 payment", func(t *testing.T, f *fixture) { f.transaction(t, f.w.ID, noon1, "x402", "confirmed", 3*u, fee(5000)) },
			[]spend{{d1, 3 * u, 1, 5000, 3 * u, 1}}},
		{"the last moment of the range's last day", func(t *testing.T, f *fixture) {
			f.transaction(t, f.w.ID, day2.Add(24*time.Hour-time.Microsecond), "usdc", "pending", u, nil)
		}, []spend{{d2, u, 1, 0, 0, 0}}},
		{"the day before the range", func(t *testing.T, f *fixture) {
			f.transaction(t, f.w.ID, day1.Add(-time.Microsecond), "usdc", "pending", u, nil)
		}, nil},
		{"the day after the range", func(t *testing.T, f *fixture) {
			f.transaction(t, f.w.ID, day2.AddDate(0, 0, 1), "usdc", "pending", u, nil)
		},
			nil},
		{"a day's transfers add up", func(t *testing.T, f *fixture) {
			f.transaction(t, f.w.ID, noon1, "usdc", "confirmed", 2*u, fee(5000))
			f.transaction(t, f.w.ID, noon1.Add(time.Hour), "usdc", "confirmed", 3*u, fee(7000))
			f.x402(t, f.w.ID, noon1, "signed", u)
			f.transaction(t, f.w.ID, day2, "usdc", "pending", u, nil)
		}, []spend{{d1, 6 * u, 3, 12000, u, 1}, {d2, u, 1, 0, 0, 0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			c.insert(t, f)
			rep, err := analytics.Compute(t.Context(), f.tx, f.acct, nil, week)
			if err != nil {
				t.Fatal(err)
			}
			var got []spend
			for _, s := range rep.Spend {
				if s.WalletID != f.w.ID {
					t.Errorf("spend of wallet %s", s.WalletID)
				}
				got = append(got, spend{s.Day.UTC().Format(time.DateOnly), s.Amount, s.Count, s.FeeLamports, s.X402Amount, s.X402Count})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("spend %+v, want %+v", got, c.want)
			}
			if spent := len(c.want) > 0; spent != (len(rep.Wallets) == 1) || (spent && rep.Wallets[0].ID != f.w.ID) {
				t.Errorf("wallets %+v", rep.Wallets)
			}
		})
	}
}

// approval inserts an approval of wallet w decided at decided, status,
// requested took before.
func (f *fixture) approval(t *testing.T, w uuid.UUID, decided time.Time, took time.Duration, status string) {
	t.Helper()
	created := decided.Add(-took)
	_, err := f.tx.ExecContext(t.Context(), `INSERT INTO approvals (id, account_id, wallet_id, amount_micros, to_address, status, created_at, expires_at, decided_at)
		VALUES (?, ?, ?, 1000000, 'to', ?, ?, ?, ?)`, uuid.New(), f.acct, w, status, created, created.Add(7*24*time.Hour), decided)
	if err != nil {
		t.Fatal(err)
	}
}

// Approvals are counted on the day they were decided, by outcome (signing
// and sent are approved); the time humans took is the median over their
// decisions, expiries left out; blocked sends are counted by reason, most
// first; a key's wallet scope keeps only its wallets.
func TestCompute_ApprovalsBlockedAndScope(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.approval(t, f.w.ID, noon1, 60*time.Second, "sent")
	f.approval(t, f.w.ID, noon1, 30*time.Second, "signing")
	f.approval(t, f.w.ID, noon1, 120*time.Second, "rejected")
	f.approval(t, f.w.ID, noon1, 7*24*time.Hour, "expired")
	f.approval(t, f.w2.ID, day2.Add(time.Hour), 300*time.Second, "rejected")
	f.approval(t, f.w.ID, day2.AddDate(0, 0, 1), time.Second, "sent") // after the range
	for i, r := range []struct {
		w              uuid.UUID
		status, reason string
	}{
		{f.w.ID, "blocked", "exceeds_daily_limit"}, {f.w.ID, "blocked", "exceeds_daily_limit"}, {f.w2.ID, "blocked", "exceeds_daily_limit"},
		{f.w.ID, "blocked", "exceeds_max_tx"}, {f.w2.ID, "blocked", "recipient_not_allowed"},
		{f.w.ID, "sent", ""}, {f.w.ID, "", ""},
	} {
		f.request(t, r.w, noon1.Add(time.Duration(i)*time.Minute), r.status, r.reason)
	}

	rep, err := analytics.Compute(t.Context(), f.tx, f.acct, nil, week)
	if err != nil {
		t.Fatal(err)
	}
	type day struct {
		day                         string
		approved, rejected, expired int
		median                      float64
	}
	var got []day
	for _, a := range rep.Approvals {
		d := day{a.Day.UTC().Format(time.DateOnly), a.Approved, a.Rejected, a.Expired, math.NaN()}
		if a.MedianDecision != nil {
			d.median = *a.MedianDecision
		}
		got = append(got, d)
	}
	if want := []day{{"2026-04-06", 2, 1, 1, 60}, {"2026-04-07", 0, 1, 0, 300}}; !slices.Equal(got, want) {
		t.Errorf("approvals %+v, want %+v", got, want)
	}
	if m := rep.MedianDecision; m == nil || *m != 90 {
		t.Errorf("median decision %v, want 90 s (of 30, 60, 120, 300)", deref(m))
	}
	blocked := func(r analytics.Report) []analytics.Blocked { return r.Blocked }
	if want := []analytics.Blocked{{Reason: "exceeds_daily_limit", Count: 3}, {Reason: "exceeds_max_tx", Count: 1}, {Reason: "recipient_not_allowed", Count: 1}}; !slices.Equal(blocked(rep), want) {
		t.Errorf("blocked %+v, want %+v", rep.Blocked, want)
	}

	scoped, err := analytics.Compute(t.Context(), f.tx, f.acct, []uuid.UUID{f.w2.ID}, week)
	if err != nil {
		t.Fatal(err)
	}
	if len(scoped.Approvals) != 1 || scoped.Approvals[0].Rejected != 1 || !scoped.Approvals[0].Day.Equal(day2) {
		t.Errorf("scoped approvals %+v", scoped.Approvals)
	}
	if want := []analytics.Blocked{{Reason: "exceeds_daily_limit", Count: 1}, {Reason: "recipient_not_allowed", Count: 1}}; !slices.Equal(scoped.Blocked, want) {
		t.Errorf("scoped blocked %+v, want %+v", scoped.Blocked, want)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// deposit inserts a deposit of asset into wallet w at at.
func (f *fixture) deposit(t *testing.T, w uuid.UUID, at time.Time, asset, status string, amount int64) {
	t.Helper()
	id := uuid.New()
	_, err := f.tx.ExecContext(t.Context(), `INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, status, created_at)
		VALUES (?, ?, ?, 'devnet', ?, ?, ?, ?, 1, ?, ?)`,
		id, f.acct, w, "sig-"+id.String(), asset, amount, sol.NewWallet().PublicKey().String(), status, at)
	if err != nil {
		t.Fatal(err)
	}
}

// Received per day, wallet and asset (every asset, not only USDC and
// SOL): confirmed deposits only, summed in the asset's base units; a
// deposit never counts as spend; a key's scope keeps only its wallets.
func TestCompute_Received(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.deposit(t, f.w.ID, noon1, "usdc", "confirmed", 2_000_000)
	f.deposit(t, f.w.ID, noon1.Add(time.Hour), "usdc", "confirmed", 500_000)
	f.deposit(t, f.w.ID, noon1, "sol", "confirmed", 250_000_000)
	f.deposit(t, f.w.ID, noon1.Add(2*time.Hour), "eurc", "confirmed", 1_250_000)
	f.deposit(t, f.w.ID, noon1.Add(3*time.Hour), "pyusd", "confirmed", 7)
	f.deposit(t, f.w.ID, noon1, "usdc", "failed", 9_000_000) // dropped by a fork
	f.deposit(t, f.w2.ID, day2.Add(time.Hour), "usdc", "confirmed", 1_000_000)
	f.deposit(t, f.w2.ID, day2.AddDate(0, 0, 1), "usdc", "confirmed", 7_000_000) // after the range
	rep, err := analytics.Compute(t.Context(), f.tx, f.acct, nil, week)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		day    string
		wallet uuid.UUID
		asset  string
		amount int64
		n      int
	}
	var all []got
	for _, r := range rep.Received {
		all = append(all, got{r.Day.Format(time.DateOnly), r.WalletID, r.Asset, r.Amount, r.Count})
	}
	d1, d2 := day1.Format(time.DateOnly), day2.Format(time.DateOnly)
	want := []got{{d1, f.w.ID, "eurc", 1_250_000, 1}, {d1, f.w.ID, "pyusd", 7, 1}, {d1, f.w.ID, "sol", 250_000_000, 1},
		{d1, f.w.ID, "usdc", 2_500_000, 2}, {d2, f.w2.ID, "usdc", 1_000_000, 1}}
	if !slices.Equal(all, want) {
		t.Fatalf("received %+v, want %+v", all, want)
	}
	if len(rep.Spend) != 0 {
		t.Fatalf("deposits counted as spend: %+v", rep.Spend)
	}
	scoped, err := analytics.Compute(t.Context(), f.tx, f.acct, []uuid.UUID{f.w2.ID}, week)
	if err != nil {
		t.Fatal(err)
	}
	if len(scoped.Received) != 1 || scoped.Received[0].WalletID != f.w2.ID {
		t.Fatalf("scoped received %+v", scoped.Received)
	}
}

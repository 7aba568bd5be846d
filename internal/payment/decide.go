package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/feepayer"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// Node is one network's RPC client, its blockhash cache and its fee
// market reading.
type Node struct {
	Client      *solana.Client
	Blockhashes *solana.BlockhashCache
	Fees        *solana.FeeCache
	// Recipients remembers the recipients whose token account exists.
	Recipients *solana.KnownAccounts
}

// Engine is the worker side of the send path: decisions, signing,
// broadcast and confirmation. Only the worker holds one (it opens keys).
type Engine struct {
	DB    *bun.DB
	Redis *redis.Client // announces final outcomes; nil disables
	// Signer signs with wallets' and fee payers' keys; it never hands
	// one out.
	Signer signer.Signer
	Nodes  map[solana.Network]Node
	// Fees prices each transfer's priority fee from the market (the zero
	// value: solana.DefaultFeePolicy).
	Fees solana.FeePolicy
	// FirstBroadcastGrace is how long after its commit the sweep leaves
	// a transaction to its worker's first broadcast (0: 3 s).
	FirstBroadcastGrace time.Duration
	// MaxAttempts is how many transactions one payment may be signed as:
	// its first, then one more each time the current one expired unseen
	// (0: DefaultMaxAttempts). Only after the last expired does it fail.
	MaxAttempts int
	// Sweeps counts running sweeps; nil counts nothing.
	Sweeps *SweepGauge
	Now    func() time.Time
	// PolicyClock, when set, is the time decisions are made at: the day
	// and the rolling windows they count, the active hours, and the
	// decision's rows (decided_at, the transaction's created_at). Nil (as
	// in production) reads the database's clock, the one clock every
	// worker and API instance shares. Tests set it.
	PolicyClock func() time.Time
	// Sealer seals the audit entries of a decision soon after its commit;
	// nil leaves them to the scheduler's seal and to readers.
	Sealer *audit.Sealer
	Log    *slog.Logger
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return now(time.Now)
	}
	return now(e.Now)
}

// policyTime is the PolicyClock's time, or nil: the database's clock.
func (e *Engine) policyTime() *time.Time {
	if e.PolicyClock == nil {
		return nil
	}
	t := now(e.PolicyClock)
	return &t
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// errNotQueued stops a decision whose request another party settled.
var errNotQueued = errors.New("request is no longer queued")

// Decide settles a queued request: in ONE transaction it locks the
// wallet, moves the request queued → decided, evaluates the policy against
// the day's reserved total and writes the outcome with its event and audit
// entry; a send also signs and stores the transaction there. Then it
// broadcasts and announces the final outcome. Deciding a request that is
// not queued does nothing, so a redelivered task is harmless.
func (e *Engine) Decide(ctx context.Context, id uuid.UUID) error {
	var (
		r    Request
		node Node
		out  *Outcome
		txn  *Transaction
	)
	err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Claim first: the request row is locked (an API abandoning it
		// waits for this commit) and read in the same statement. Past its
		// deadline it is abandoned instead, on the database's clock.
		// decided_at is the decision's time (the PolicyClock's, if set).
		err := postgres.QueryRow(ctx, tx, []any{&r}, `UPDATE send_requests
			SET state = CASE WHEN deadline > now() THEN $1 ELSE $2 END, decided_at = coalesce($3::timestamptz, now())
			WHERE id = $4 AND state = $5
			RETURNING `+postgres.Columns(tx, &r)+`, (SELECT pubkey FROM fee_payers AS f WHERE f.account_id = send_requests.account_id AND f.enabled) AS sponsor`,
			StateDecided, StateAbandoned, e.policyTime(), id, StateQueued)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotQueued
		}
		if err != nil {
			return fmt.Errorf("claim send request: %w", err)
		}
		if r.State == StateAbandoned {
			e.log().WarnContext(ctx, "send request past its deadline; abandoned", "send_request_id", r.ID)
			return nil
		}
		var ok bool
		if node, ok = e.Nodes[r.Network]; !ok {
			return fmt.Errorf("no Solana node configured for %s", r.Network)
		}
		// An x402 grant's approval is locked before the wallet, the order
		// Execute keeps.
		var grant *approval.Approval
		if r.X402 != nil && r.X402.ApprovalID.Valid {
			if grant, err = lockGrant(ctx, tx, r.X402.ApprovalID.UUID); err != nil {
				return err
			}
		}
		// The wallet lock serializes decisions of one wallet; its usage
		// (the day's, the rolling windows' totals and its payment counts)
		// is read after it is held, so it includes every earlier
		// decision's reservation and payment.
		var w wallet.Wallet
		if err := postgres.QueryRow(ctx, tx, []any{&w}, `SELECT `+postgres.Columns(tx, &w)+` FROM wallets WHERE id = $1 FOR UPDATE`, r.WalletID); err != nil {
			return fmt.Errorf("lock wallet: %w", err)
		}
		// The database's clock (the claim's decided_at) places the send in
		// its UTC day, its windows and its active hours, so workers with
		// skewed clocks agree.
		at := r.DecidedAt.Time.UTC()
		p := w.Policy()
		usage, err := ReadUsage(ctx, tx, w.ID, at, p.Windows())
		if err != nil {
			return err
		}
		// A payment redeeming an x402 grant was approved by a human: its
		// parked request was counted and its hours judged.
		redeems := r.X402 != nil && r.X402.ApprovalID.Valid
		d := p.Evaluate(policy.Request{To: r.To, Amount: r.Amount, Frozen: w.State == wallet.Frozen, Usage: usage, At: at, Approved: redeems})
		if redeems {
			if why, err := checkGrant(ctx, tx, &r, grant); err != nil {
				return err
			} else if why != "" {
				out = &Outcome{Status: Refused, Detail: "approval_id: " + why, RemainingToday: int64(d.RemainingToday)}
				return setOutcome(ctx, tx, r.ID, out)
			}
			if d.Outcome == policy.NeedsApproval {
				// What the human granted: the policy's other rules
				// still hold, evaluated now.
				d.Outcome = policy.Send
			}
		}
		switch d.Outcome {
		case policy.Blocked:
			out, err = e.block(ctx, tx, &r, d, at)
		case policy.NeedsApproval:
			out, err = e.park(ctx, tx, &r, &w, d, at)
		case policy.Send:
			if r.X402 != nil {
				out, err = e.signX402(ctx, tx, node, &r, &w, d, at)
				break
			}
			txn, out, err = e.sign(ctx, tx, node, &r, &w, d, at)
		}
		return err
	})
	if errors.Is(err, errNotQueued) {
		return nil
	}
	if err != nil {
		return err
	}
	if out != nil || txn != nil {
		e.Sealer.Mark(r.AccountID)
	}
	if txn != nil {
		out, err = e.firstBroadcast(ctx, node, &r, txn)
		if err != nil {
			return err
		}
	}
	e.announce(ctx, r.ID, out)
	return nil
}

func setOutcome(ctx context.Context, db bun.IDB, id uuid.UUID, o *Outcome) error {
	_, err := postgres.Exec(ctx, db, `UPDATE send_requests SET outcome = $1 WHERE id = $2`, o, id)
	if err != nil {
		return fmt.Errorf("store outcome: %w", err)
	}
	return nil
}

func (e *Engine) announce(ctx context.Context, id uuid.UUID, o *Outcome) {
	if e.Redis == nil {
		return
	}
	if err := Publish(ctx, e.Redis, id, o); err != nil {
		e.log().WarnContext(ctx, "announce outcome; the API will poll", "send_request_id", id, "err", err)
	}
}

// actorOf is who made the send, as audit entries name them: the key, or
// the dashboard user.
func actorOf(r *Request) string {
	switch {
	case r.KeyID.Valid:
		return "key_" + r.KeyID.UUID.String()
	case r.UserAddress != nil:
		return "user:" + *r.UserAddress
	}
	return "system"
}

func (e *Engine) block(ctx context.Context, tx bun.Tx, r *Request, d policy.Decision, at time.Time) (*Outcome, error) {
	data := map[string]any{
		"wallet_id": r.WalletID, "amount": r.Amount, "to": r.To, "reason": d.Reason, "memo": r.Memo,
	}
	if r.X402 != nil {
		data["kind"], data["resource"] = "x402", r.X402.Resource
	}
	out := &Outcome{Status: Blocked, Reason: d.Reason, RemainingToday: int64(d.RemainingToday)}
	details := map[string]any{
		"request_id": r.ID, "amount": r.Amount, "to": r.To, "reason": d.Reason,
		"remaining_today": d.RemainingToday,
	}
	if err := settleWithEvent(ctx, tx, r, out, webhook.KindTxBlocked, data, at, audit.ActionSendBlocked, details); err != nil {
		return nil, err
	}
	return out, nil
}

// settleWithEvent stores the request's outcome, emits its event and
// appends its audit entry (action, details) in one statement: the
// decision's last, so the audit chain's lock is held only to the commit.
func settleWithEvent(ctx context.Context, tx bun.Tx, r *Request, o *Outcome, kind string, data any, at time.Time, action string, details any) error {
	ev, err := webhook.NewEvent(r.AccountID, at, kind, data)
	if err != nil {
		return err
	}
	err = audit.AppendWith(ctx, tx, `ev AS (INSERT INTO events (id, account_id, kind, data, created_at) VALUES ($1, $2, $3, $4, $5)),
		o AS (UPDATE send_requests SET outcome = $6 WHERE id = $7)`,
		[]any{ev.ID, ev.AccountID, ev.Kind, string(ev.Data), ev.CreatedAt, o, r.ID},
		r.AccountID, at, actorOf(r), action, wallet.Target(r.WalletID), details)
	if err != nil {
		return fmt.Errorf("store outcome, %s event and audit entry: %w", kind, err)
	}
	return nil
}

func (e *Engine) park(ctx context.Context, tx bun.Tx, r *Request, w *wallet.Wallet, d policy.Decision, at time.Time) (*Outcome, error) {
	a := approval.Approval{
		ID: uuid.New(), AccountID: r.AccountID, WalletID: r.WalletID,
		RequestID:   uuid.NullUUID{UUID: r.ID, Valid: true},
		RequestedBy: r.KeyID, RequestedLineage: r.KeyLineage, RequestedByUser: r.UserAddress, Requesters: r.Requesters,
		Amount: r.Amount, To: r.To, Memo: r.Memo,
		Status: approval.Pending, CreatedAt: at, ExpiresAt: at.Add(approval.Lifetime),
	}
	if _, err := tx.NewInsert().Model(&a).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert approval: %w", err)
	}
	needed, err := approval.Quorum(ctx, tx, r.WalletID)
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"approval_id": approval.PublicID(a.ID), "wallet_id": r.WalletID, "agent_label": w.Label,
		"amount": r.Amount, "to": r.To, "memo": r.Memo, "approvals": []approval.VoteDoc{}, "approvals_needed": needed,
	}
	if r.X402 != nil {
		// Approvers see what is bought and from whom.
		data["kind"], data["resource"], data["description"] = "x402", r.X402.Resource, r.X402.Description
	}
	out := &Outcome{Status: PendingApproval, ApprovalID: a.ID, RemainingToday: int64(d.RemainingToday)}
	if r.X402 != nil {
		out.X402 = &X402Signed{PaymentID: r.ID, Amount: int64(r.Amount), PayTo: r.To, Network: r.X402.NetworkID, Resource: r.X402.Resource}
	}
	details := map[string]any{"request_id": r.ID, "approval_id": approval.PublicID(a.ID), "amount": r.Amount, "to": r.To}
	if err := settleWithEvent(ctx, tx, r, out, webhook.KindApprovalPending, data, at, audit.ActionSendPendingApproval, details); err != nil {
		return nil, err
	}
	return out, nil
}

// errNoBlockhash: the node gave no blockhash in time; nothing was signed.
var errNoBlockhash = errors.New("no blockhash from the Solana node")

// spend is a transfer the policy allowed: a send request's or an
// approval's. Its id is the transfer's Solana Pay reference.
type spend struct {
	accountID, walletID   uuid.UUID
	network               solana.Network
	to                    string
	amount                usdc.Micros
	memo                  *string
	requestID, approvalID uuid.NullUUID
	// sponsor is the account's enabled fee payer (nil: none) when
	// sponsorRead; else signSpend reads it.
	sponsor     *string
	sponsorRead bool
}

func (s *spend) reference() sol.PublicKey {
	if s.approvalID.Valid {
		return solana.ReferenceFor(s.approvalID.UUID)
	}
	return solana.ReferenceFor(s.requestID.UUID)
}

// signTransfer builds and signs the transfer with a cached blockhash and
// stores it (reserving its amount) before anything is broadcast. Without
// a blockhash nothing is signed: errNoBlockhash; with the fee market above
// the cap neither: errFeeAboveCap; nor past the fee payer's daily budget:
// errFeePayerBudget.
func (e *Engine) signTransfer(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, at time.Time) (*Transaction, error) {
	// A node not (yet) verified to be of the network's chain is never
	// signed for: a mainnet transfer "confirmed" by a local chain would
	// have moved nothing real.
	if err := node.Client.ChainErr(); err != nil {
		e.log().ErrorContext(ctx, "the network's Solana node is not verified; nothing signed", "wallet_id", w.ID, "err", err)
		return nil, errNoBlockhash
	}
	// Normally cached; bounded so a stalled node cannot hold the wallet
	// and request locks for long.
	bctx, cancel := context.WithTimeout(ctx, time.Second)
	bh, err := node.Blockhashes.Get(bctx)
	cancel()
	if err != nil {
		e.log().WarnContext(ctx, "no blockhash; nothing signed", "wallet_id", w.ID, "err", err)
		return nil, errNoBlockhash
	}
	st, err := e.signSpend(ctx, tx, node, w, s, bh, func(t solana.Transfer) []uint64 { return e.readFees(ctx, node, s.network, t) }, uuid.Nil, at)
	if err != nil {
		return nil, err
	}
	t := Transaction{
		ID: uuid.New(), AccountID: s.accountID, WalletID: s.walletID,
		RequestID: s.requestID, ApprovalID: s.approvalID,
		Network: s.network, Signature: st.signature, Kind: "usdc", Direction: "send",
		Amount: s.amount, Counterparty: s.to, Memo: s.memo, Status: TxPending,
		SignedTx: st.raw, LastValidBlockHeight: st.lastValid, FeeLamports: &st.fee, Attempts: 1,
		FeePayer: st.feePayer, SponsoredLamports: st.sponsored,
		CreatedAt: at, UpdatedAt: at,
	}
	if _, err := tx.NewInsert().Model(&t).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert transaction: %w", err)
	}
	return &t, nil
}

// signedTransfer is a spend's transfer built and signed, not yet stored.
type signedTransfer struct {
	raw       []byte
	signature string
	lastValid uint64 // its blockhash's last valid block height
	fee       int64  // lamports it pays if it lands
	// feePayer is the account's fee payer that co-signed it (nil: the
	// wallet pays) and sponsored what it is counted for in its budget.
	feePayer  *string
	sponsored *int64
}

// signSpend builds s's transfer on blockhash bh, priced from the market
// that fees reads for it (by the engine's fee policy), and signs it with
// w's key (and the account's fee payer's, when sponsorship is on; its
// budget is checked under its row lock, held by tx). A market above the
// cap is an errFeeAboveCap, a budget passed an errFeePayerBudget: nothing
// is signed. The first send and a re-sign after expiry both sign here;
// replacing is the transaction a re-sign replaces (its current attempt is
// not counted against the budget twice), uuid.Nil at the first send.
func (e *Engine) signSpend(ctx context.Context, tx bun.Tx, node Node, w *wallet.Wallet, s *spend, bh solana.Blockhash, fees func(solana.Transfer) []uint64, replacing uuid.UUID, at time.Time) (signedTransfer, error) {
	to, err := sol.PublicKeyFromBase58(s.to)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("recipient %q: %w", s.to, err)
	}
	memo := ""
	if s.memo != nil {
		memo = *s.memo
	}
	transfer := solana.Transfer{Owner: w.PublicKey(), To: to, Amount: s.amount, Memo: memo, Reference: s.reference()}
	// Sponsored or not is decided under the fee payer's lock below; this
	// read (no lock: the fee reading may wait on the node; a send's claim
	// made it) names the fee payer among the accounts whose market is
	// read, and spares accounts without sponsorship the lock. Enabled
	// after it, sponsorship starts with the next send.
	sponsor := s.sponsor
	if !s.sponsorRead {
		f, ok, err := feepayer.Get(ctx, tx, s.accountID)
		if err != nil {
			return signedTransfer{}, err
		}
		if ok && f.Enabled {
			sponsor = f.Pubkey
		}
	}
	if sponsor != nil {
		transfer.FeePayer = (&feepayer.FeePayer{Pubkey: sponsor}).PublicKey()
	}
	// The fee reading (normally cached) and the recipient's account are
	// read at once: a slow node costs the held locks one wait, not two.
	market := make(chan []uint64, 1)
	go func(t solana.Transfer) { market <- fees(t) }(transfer) // a copy: transfer changes below
	transfer.RecipientAccountExists = e.recipientExists(ctx, node, to)
	units, err := solana.TransferComputeUnits(s.network, transfer)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("compute units: %w", err)
	}
	if transfer.ComputeUnitPrice, err = e.price(ctx, s.network, <-market, units); err != nil {
		return signedTransfer{}, err
	}
	var payer *feepayer.FeePayer
	var sponsored int64
	if !transfer.FeePayer.IsZero() {
		if payer, sponsored, err = e.sponsor(ctx, tx, s, &transfer, units, replacing, at); err != nil {
			return signedTransfer{}, err
		}
	}
	unsigned, err := node.Client.BuildTransfer(transfer, bh)
	if err != nil {
		return signedTransfer{}, fmt.Errorf("build transfer: %w", err)
	}
	keys := []signer.Key{w.Key()}
	if payer != nil {
		keys = append(keys, payer.Key())
	}
	raw, sig, err := solana.Sign(ctx, unsigned, signer.For(e.Signer, keys...))
	if err != nil {
		return signedTransfer{}, err
	}
	st := signedTransfer{
		raw: raw, signature: sig.String(), lastValid: bh.LastValidBlockHeight,
		fee: int64(transfer.FeeLamports(units, transfer.ComputeUnitPrice)),
	}
	if payer != nil {
		st.feePayer, st.sponsored = payer.Pubkey, &sponsored
	}
	return st, nil
}

// errFeePayerBudget: the account's fee payer would pass its daily budget
// with this transfer; nothing signed.
type errFeePayerBudget struct {
	spent, cost, budget int64
}

func (e errFeePayerBudget) Error() string {
	return fmt.Sprintf("the account's fee payer has spent %s of its daily budget of %s SOL, and this payment's fee and rent (%s SOL) would pass it",
		solString(e.spent), solString(e.budget), solString(e.cost))
}

// solString is lamports as SOL, with no trailing zeros.
func solString(lamports int64) string {
	s := fmt.Sprintf("%d.%09d", lamports/solana.LamportsPerSOL, lamports%solana.LamportsPerSOL)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// sponsor decides, under the account's fee payer row lock (held until
// the decision commits), whether the account's fee payer pays t: still
// enabled, its cost (the fee and, when the recipient's token account may
// have to be made, its rent) is checked against the day's budget with
// every earlier sponsored transaction of the day counted; over it,
// errFeePayerBudget. Turned off since the fee reading: the wallet pays,
// nil.
func (e *Engine) sponsor(ctx context.Context, tx bun.Tx, s *spend, t *solana.Transfer, units uint32, replacing uuid.UUID, at time.Time) (*feepayer.FeePayer, int64, error) {
	f, ok, err := feepayer.Lock(ctx, tx, s.accountID)
	if err != nil {
		return nil, 0, err
	}
	if !ok || !f.Enabled {
		t.FeePayer = sol.PublicKey{}
		return nil, 0, nil
	}
	t.FeePayer = f.PublicKey()
	cost := int64(t.FeeLamports(units, t.ComputeUnitPrice))
	if !t.RecipientAccountExists {
		cost += solana.TokenAccountRentLamports
	}
	spent, _, err := feepayer.SpentToday(ctx, tx, s.accountID, at, replacing)
	if err != nil {
		return nil, 0, err
	}
	if spent+cost > f.DailyBudget {
		e.log().WarnContext(ctx, "fee payer's daily budget reached; nothing signed", "account_id", s.accountID,
			"spent_lamports", spent, "cost_lamports", cost, "budget_lamports", f.DailyBudget)
		return nil, 0, errFeePayerBudget{spent: spent, cost: cost, budget: f.DailyBudget}
	}
	return &f, cost, nil
}

// feeReadWait bounds the wait for a fee reading during a decision (it is
// normally cached): the wallet's and the request's locks are held.
const feeReadWait = time.Second

// recipientExists reports whether to's token account is known to exist,
// so the transfer requests no compute for creating it. Unknown (the node
// did not answer in time) counts as missing: more compute requested, a
// few hundred lamports more at most, never a transfer out of compute.
func (e *Engine) recipientExists(ctx context.Context, node Node, to sol.PublicKey) bool {
	if node.Recipients != nil && node.Recipients.Has(to) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, feeReadWait)
	defer cancel()
	ok, err := node.Client.TokenAccountExists(ctx, to)
	if err != nil {
		e.log().WarnContext(ctx, "recipient's token account not read; compute requested for creating it", "err", err)
		return false
	}
	if ok && node.Recipients != nil {
		node.Recipients.Add(to)
	}
	return ok
}

// errFeeAboveCap: the market is above the configured cap; nothing signed.
type errFeeAboveCap struct{ *solana.FeeAboveCapError }

// readFees is the network's recent fee market for t's writable accounts
// (cached; a reading that fails or does not come within feeReadWait falls
// back to the last one, or to none, and says so in the log).
func (e *Engine) readFees(ctx context.Context, node Node, network solana.Network, t solana.Transfer) []uint64 {
	if node.Fees == nil {
		return nil
	}
	accounts, err := solana.WritableAccounts(network, t)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, feeReadWait)
	defer cancel()
	reading, err := node.Fees.Get(ctx, accounts)
	if err != nil {
		e.log().WarnContext(ctx, "fee market not read; priced from the last reading, or the floor without one",
			"network", network, "last_reading", len(reading.Fees) > 0, "err", err)
	}
	return reading.Fees
}

// price is the compute-unit price of a transfer of units compute units
// in the market recent, by the engine's fee policy. A market above the
// cap is an errFeeAboveCap: nothing is signed.
func (e *Engine) price(ctx context.Context, network solana.Network, recent []uint64, units uint32) (uint64, error) {
	policy := e.Fees
	if policy == (solana.FeePolicy{}) {
		policy = solana.DefaultFeePolicy
	}
	price, err := policy.Price(recent, units)
	var over *solana.FeeAboveCapError
	if errors.As(err, &over) {
		e.log().WarnContext(ctx, "priority fee market above the cap; nothing signed", "network", network,
			"market_microlamports", over.Market, "cap_microlamports", over.Cap)
		return 0, errFeeAboveCap{over}
	}
	return price, err
}

// sign signs a send request's transfer and records it as sent.
func (e *Engine) sign(ctx context.Context, tx bun.Tx, node Node, r *Request, w *wallet.Wallet, d policy.Decision, at time.Time) (*Transaction, *Outcome, error) {
	t, err := e.signTransfer(ctx, tx, node, w, &spend{
		accountID: r.AccountID, walletID: r.WalletID, network: r.Network, to: r.To, amount: r.Amount, memo: r.Memo,
		requestID: uuid.NullUUID{UUID: r.ID, Valid: true}, sponsor: r.Sponsor, sponsorRead: true,
	}, at)
	if errors.Is(err, errNoBlockhash) {
		out := &Outcome{Status: Unavailable, Detail: "the Solana node did not answer", RemainingToday: int64(d.RemainingToday)}
		return nil, out, setOutcome(ctx, tx, r.ID, out)
	}
	var fc errFeeAboveCap
	if errors.As(err, &fc) {
		out := &Outcome{Status: Unavailable, Cause: CauseFeeCapBelowMarket, Detail: fc.Error(), RemainingToday: int64(d.RemainingToday)}
		return nil, out, setOutcome(ctx, tx, r.ID, out)
	}
	var fb errFeePayerBudget
	if errors.As(err, &fb) {
		out := &Outcome{Status: Unavailable, Cause: CauseFeePayerBudgetExceeded, Detail: fb.Error(), RemainingToday: int64(d.RemainingToday)}
		return nil, out, setOutcome(ctx, tx, r.ID, out)
	}
	var tl *solana.TooLargeError
	if errors.As(err, &tl) {
		// The API refuses such memos first; this holds if it did not.
		out := &Outcome{Status: Refused, Detail: tl.Error(), RemainingToday: int64(d.RemainingToday)}
		return nil, out, setOutcome(ctx, tx, r.ID, out)
	}
	if err != nil {
		return nil, nil, err
	}
	// Sent from this commit on, even if the worker dies before its first
	// broadcast (the sweep broadcasts it); the broadcast's answer refines
	// it. The outcome and the audit entry are one statement.
	details := map[string]any{
		"request_id": r.ID, "transaction_id": t.ID, "signature": t.Signature, "amount": r.Amount, "to": r.To,
	}
	err = audit.AppendWith(ctx, tx, `o AS (UPDATE send_requests SET outcome = $1 WHERE id = $2)`,
		[]any{&Outcome{Status: Sent, Signature: t.Signature, Broadcasting: true}, r.ID},
		r.AccountID, at, actorOf(r), audit.ActionSendSent, wallet.Target(r.WalletID), details)
	if err != nil {
		return nil, nil, fmt.Errorf("store outcome: %w", err)
	}
	return t, nil, nil
}

// firstBroadcast sends the stored bytes and records the final outcome. A
// refusal by the node proves nothing went out: the transaction is never
// sent again (answered refused), and keeps its reservation until its
// blockhash expires. Any other failure leaves it pending: the confirmation
// sweep re-broadcasts the same bytes until they land or the blockhash
// expires, so the answer is still sent.
func (e *Engine) firstBroadcast(ctx context.Context, node Node, r *Request, t *Transaction) (*Outcome, error) {
	_, err := node.Client.Broadcast(ctx, t.SignedTx)
	out := &Outcome{Status: Sent, Signature: t.Signature}
	var pe *solana.PreflightError
	switch {
	case err == nil:
		// The outcome and the broadcast count in one statement, whose
		// commit does not wait for its WAL flush (this transaction only):
		// lost in a crash, the row is back to sent and never broadcast,
		// which the sweep answers by broadcasting the same bytes again,
		// and the answer was sent either way. A refusal, below, waits.
		_, err := postgres.Exec(ctx, e.DB, `WITH b AS (UPDATE transactions SET broadcasts = broadcasts + 1 WHERE id = $1)
			UPDATE send_requests SET outcome = $2 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async
			WHERE id = $3`, t.ID, out, r.ID)
		if err != nil {
			return nil, fmt.Errorf("store outcome: %w", err)
		}
		return out, nil
	case errors.As(err, &pe) && !pe.BlockhashNotFound() && !pe.AlreadyProcessed():
		if to, err := sol.PublicKeyFromBase58(t.Counterparty); err == nil && node.Recipients != nil {
			node.Recipients.Forget(to) // it may have closed its account
		}
		out = &Outcome{Status: Refused, Detail: pe.Message}
		out.Short, _ = pe.InsufficientFunds()
		if out.Short == "SOL" && t.FeePayer != nil {
			out.Short = ShortFeePayerSOL // the wallet pays neither fee nor rent
		}
		err := e.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			refused, err := e.refuse(ctx, tx, t, "refused by the node: "+pe.Message)
			if err != nil {
				return err
			}
			if !refused {
				// A sweep's re-broadcast got it out first (or it landed):
				// it was sent.
				out = &Outcome{Status: Sent, Signature: t.Signature}
			}
			return setOutcome(ctx, tx, r.ID, out)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	default:
		e.log().WarnContext(ctx, "broadcast failed; the sweep re-broadcasts", "transaction_id", t.ID, "err", err)
	}
	if err := setOutcome(ctx, e.DB, r.ID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// refuse records the node's refusal of t's first broadcast (why): t is
// never sent again, and keeps its reservation until its blockhash has
// expired, when the sweep fails it. An approval waiting on it is rejected
// by the system now: nothing can go out any more. False means a
// re-broadcast got it out first (the update waits for that re-broadcast's
// row lock and sees its count), or it was settled: it was sent.
func (e *Engine) refuse(ctx context.Context, tx bun.Tx, t *Transaction, why string) (bool, error) {
	at := e.now()
	res, err := tx.NewUpdate().Table("transactions").
		Set("refused_at = ?", at).Set("error = ?", why).Set("updated_at = ?", at).
		// Nothing went out: the fee payer pays nothing for it.
		Set("sponsored_lamports = "+paidNothing.sponsored()).
		Where("id = ? AND status = ? AND refused_at IS NULL AND broadcasts = 0", t.ID, TxPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("record refusal: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if t.ApprovalID.Valid {
		if _, err := approval.RejectBySystem(ctx, tx, t.ApprovalID.UUID, approval.ReasonRefused, why, at); err != nil {
			return false, err
		}
	}
	return true, nil
}

// feePaid is what the fee payer of a transaction that failed paid for
// it: its sponsored_lamports becomes that, so the day's budget counts what
// was paid (a signed transaction reserves its fee and rent; one that can
// no longer land releases what it did not pay).
type feePaid int

const (
	// paidNothing: it never landed (refused, or expired unseen).
	paidNothing feePaid = iota
	// paidFee: it landed and failed: the fee is charged, and the
	// recipient's account it offered to make was rolled back with it.
	paidFee
	// paidUnknown: it may have landed; all it reserved stays counted.
	paidUnknown
)

// sponsored is the SQL expression of the transaction's sponsored_lamports
// once it paid p (null stays null: the wallet paid its own way).
func (p feePaid) sponsored() string {
	switch p {
	case paidNothing:
		return "CASE WHEN sponsored_lamports IS NULL THEN NULL ELSE 0 END"
	case paidFee:
		return "CASE WHEN sponsored_lamports IS NULL THEN NULL ELSE LEAST(sponsored_lamports, fee_lamports) END"
	}
	return "sponsored_lamports"
}

// failTx marks a pending transaction failed (releasing its reservation)
// with an audit entry and a tx.failed event; an approval still signing for
// it is rejected by the system. False means it was no longer pending.
func (e *Engine) failTx(ctx context.Context, tx bun.Tx, t *Transaction, why string, paid feePaid, reason string) (bool, error) {
	at := e.now()
	res, err := tx.NewUpdate().Table("transactions").
		Set("status = ?", TxFailed).Set("error = ?", why).Set("updated_at = ?", at).
		Set("sponsored_lamports = "+paid.sponsored()).
		Where("id = ? AND status = ?", t.ID, TxPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("fail transaction: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if t.ApprovalID.Valid {
		// The approval row before the audit lock, the order every
		// transaction keeps.
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM approvals WHERE id = ? FOR UPDATE", t.ApprovalID.UUID); err != nil {
			return false, fmt.Errorf("lock approval: %w", err)
		}
	}
	details := map[string]any{"transaction_id": t.ID, "signature": t.Signature, "amount": t.Amount, "to": t.Counterparty, "error": why}
	// Under the payment's requester, like its send.sent: the key or
	// person who asked for it (system when it is unknown).
	var actor string
	err = tx.NewRaw(`SELECT COALESCE('key_' || r.key_id::text, 'user:' || r.user_address,
			'key_' || a.requested_by::text, 'user:' || a.requested_by_user, 'system')
		FROM (SELECT 1) AS one
		LEFT JOIN send_requests AS r ON r.id = ?
		LEFT JOIN approvals AS a ON a.id = ?`, t.RequestID, t.ApprovalID).Scan(ctx, &actor)
	if err != nil {
		return false, fmt.Errorf("read the payment's requester: %w", err)
	}
	if err := audit.Append(ctx, tx, t.AccountID, at, actor, audit.ActionSendFailed, wallet.Target(t.WalletID), details); err != nil {
		return false, err
	}
	// Never silent: whoever was told "sent" hears that it failed.
	data := map[string]any{"wallet_id": t.WalletID, "signature": t.Signature, "amount": t.Amount, "to": t.Counterparty, "memo": t.Memo, "reason": why}
	if t.ApprovalID.Valid {
		data["approval_id"] = approval.PublicID(t.ApprovalID.UUID)
	}
	if _, err := webhook.Emit(ctx, tx, t.AccountID, at, webhook.KindTxFailed, data); err != nil {
		return false, err
	}
	if t.ApprovalID.Valid {
		if _, err := approval.RejectBySystem(ctx, tx, t.ApprovalID.UUID, reason, why, at); err != nil {
			return false, err
		}
	}
	return true, nil
}

// NewNode connects to one network's RPC node.
func NewNode(url string, network solana.Network, timeout time.Duration) Node {
	return NodeOf(solana.NewClient(url, network, timeout))
}

// NodeOf is the node behind client, with its blockhash cache.
func NodeOf(c *solana.Client) Node {
	return Node{Client: c, Blockhashes: solana.NewBlockhashCache(c, 0), Fees: solana.NewFeeCache(c, 0), Recipients: solana.NewKnownAccounts(0)}
}

// RunBlockhashes keeps every node's blockhash fresh in the background
// until ctx ends.
func (e *Engine) RunBlockhashes(ctx context.Context) {
	for _, n := range e.Nodes {
		go n.Blockhashes.Run(ctx)
	}
}

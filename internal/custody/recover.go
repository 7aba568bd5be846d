package custody

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Audit actions of a recovery, all by system, in this order: the intent
// (with the wallet's freeze) before anything is signed, each transaction
// signed before it is broadcast, and each one that landed.
const (
	ActionRecoveryStarted = audit.ActionRecoveryStarted
	ActionRecoverySigned  = audit.ActionRecoverySigned
	ActionRecovered       = audit.ActionRecovered
)

// SOL is how Intent.Asset names the wallet's lamports.
const SOL = "SOL"

// ErrNothingToRecover is a wallet with nothing (of the asset asked for)
// to move.
var ErrNothingToRecover = errors.New("nothing to recover")

// ErrRecoveryRunning refuses a second recovery of a wallet while one runs.
var ErrRecoveryRunning = errors.New("another recovery of this wallet is running")

// Recovery moves a wallet's money to an address with the service
// stopped: every asset of its network, token account by token account,
// then its SOL. It needs the database (the wallet's key or its
// reference), the signers and a node, no api, no worker, no Redis.
type Recovery struct {
	DB     *bun.DB
	Signer signer.Signer
	Client *solana.Client
	// Assets are the network's tokens (the asset table's, USDC first),
	// moved in this order; empty: the network's USDC alone.
	Assets []solana.Token
	// FeePayer, when set, pays the network fees and the rent of the
	// recipient's token accounts (a keypair of the operator's, signed
	// for by FeePayerSign); else the wallet pays, from its SOL.
	FeePayer     sol.PublicKey
	FeePayerSign signer.SignFunc
	// Attempts bounds how many transactions are signed for one holding
	// (a token account, or the SOL; each after the previous one's blockhash expired unseen);
	// default 3.
	Attempts int
	// Poll is how often a transaction's status is read; default 500ms.
	Poll time.Duration
}

// Intent is who runs a recovery and why, recorded before anything is
// signed: a recovery moves money on one person's word, outside every
// policy.
type Intent struct {
	Operator string
	Reason   string
	// Asset, when set, is the only asset moved: a symbol of the
	// network's assets, or SOL. Empty: every asset, then SOL.
	Asset string
}

// Moved is one transaction of a recovery that landed.
type Moved struct {
	Asset    string
	Units    uint64
	Decimals uint8
	// From is the token account it emptied (the wallet for SOL).
	From      string
	To        string
	Signature string
}

// Amount is m's amount in its asset's units ("12.5").
func (m Moved) Amount() string { return formatUnits(m.Units, m.Decimals) }

// Recovered is what a run moved, in order (an interrupted run's
// transaction that landed first), and what it could not move.
type Recovered struct {
	Moved []Moved
	// Left names each holding left in the wallet and why (an account
	// its mint's issuer froze, a transfer that failed on chain or that
	// the node refused, SOL too little to open the address).
	Left []string
}

// attempt is a recovery transaction as its wallet.recovery_signed entry
// records it: enough to broadcast it again, to know when it can no
// longer land, and to record what it moved.
type attempt struct {
	Signature string `json:"signature"`
	Asset     string `json:"asset"`
	Mint      string `json:"mint"`
	Decimals  uint8  `json:"decimals"`
	From      string `json:"from"`
	Units     uint64 `json:"units"`
	// AmountMicros is the USDC an entry written before recoveries moved
	// other assets moved (it has no asset).
	AmountMicros uint64 `json:"amount_micros"`
	To           string `json:"to"`
	LastValid    uint64 `json:"last_valid_block_height"`
	Transaction  []byte `json:"transaction"`
}

func (a attempt) moved() Moved {
	return Moved{Asset: a.Asset, Units: a.Units, Decimals: a.Decimals, From: a.From, To: a.To, Signature: a.Signature}
}

// Run moves wallet id's money to to: each token account of each asset
// (in.Asset's alone when set) holding any, one transaction each, then
// its SOL less the fee. First, in one commit, it freezes the wallet (the
// service must not pay from it meanwhile, nor after) and records
// wallet.recovery_started with in; each transaction is recorded
// (wallet.recovery_signed) before it is broadcast and followed until it
// lands (wallet.recovered), fails or expires before the next is signed,
// so at most one can be in flight.
//
// A run that was interrupted is finished by the next: the last
// transaction signed and not recorded as landed is broadcast again and
// followed until it lands (then it counts, whatever the new run's to) or
// can no longer land; only then is anything read and signed. Every
// transaction moves what the chain says its account holds when it is
// built, so what an earlier one moved is never sent twice. Runs of one
// wallet take turns (a PostgreSQL advisory lock).
func (r *Recovery) Run(ctx context.Context, id uuid.UUID, to sol.PublicKey, in Intent) (Recovered, error) {
	var out Recovered
	if strings.TrimSpace(in.Operator) == "" || strings.TrimSpace(in.Reason) == "" {
		return out, errors.New("a recovery needs an operator and a reason")
	}
	tokens, withSOL, err := r.which(in.Asset)
	if err != nil {
		return out, err
	}
	unlock, err := r.lock(ctx, id)
	if err != nil {
		return out, err
	}
	defer unlock()
	w, err := r.start(ctx, id, to, in)
	if err != nil {
		return out, err
	}
	s := r.sweeper(&w, to)
	if m, ok, err := s.finishInterrupted(ctx); err != nil {
		return out, err
	} else if ok {
		out.Moved = append(out.Moved, m)
	}

	plan, left, err := s.plan(ctx, tokens)
	if err != nil {
		return out, err
	}
	out.Left = append(out.Left, left...)
	transfers := make([]transfer, 0, len(plan)+1)
	for _, h := range plan {
		transfers = append(transfers, s.tokenTransfer(h.token, h.account.Address))
	}
	if withSOL {
		transfers = append(transfers, s.solTransfer()) // last: the tokens' fees and rent come out of it
	}
	for _, t := range transfers {
		m, err := s.sweep(ctx, t)
		var gone *goneError
		switch {
		case errors.As(err, &gone):
			out.Left = append(out.Left, gone.Error())
		case errors.Is(err, errEmpty):
		case err != nil:
			return out, err
		default:
			out.Moved = append(out.Moved, m)
		}
	}
	if len(out.Moved) == 0 {
		what := "the wallet holds nothing to move"
		if in.Asset != "" {
			what = "the wallet holds no " + strings.ToUpper(in.Asset)
		}
		if len(out.Left) > 0 {
			return out, fmt.Errorf("%w: %s that can be moved: %s", ErrNothingToRecover, what, strings.Join(out.Left, "; "))
		}
		return out, fmt.Errorf("%w: %s", ErrNothingToRecover, what)
	}
	return out, nil
}

// which is the tokens a run moves, and whether it moves SOL: every
// asset and SOL, or asset's alone.
func (r *Recovery) which(asset string) ([]solana.Token, bool, error) {
	tokens := r.Assets
	if len(tokens) == 0 {
		tokens = []solana.Token{r.Client.Network().USDC()}
	}
	if asset == "" {
		return tokens, true, nil
	}
	if strings.EqualFold(asset, SOL) {
		return nil, true, nil
	}
	names := make([]string, 0, len(tokens)+1)
	for _, tk := range tokens {
		if strings.EqualFold(tk.Symbol, asset) {
			return []solana.Token{tk}, false, nil
		}
		names = append(names, tk.Symbol)
	}
	return nil, false, fmt.Errorf("%q is no asset of %s: want one of %s", asset, r.Client.Network(), strings.Join(append(names, SOL), ", "))
}

// lock takes the wallet's recovery lock for the run, on a connection of
// its own (released with it, also when the process dies).
func (r *Recovery) lock(ctx context.Context, id uuid.UUID) (func(), error) {
	conn, err := r.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("recovery lock: %w", err)
	}
	key := "wallet recovery " + id.String()
	var ok bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended(?, 0))`, key).Scan(&ok); err != nil {
		conn.Close()
		return nil, fmt.Errorf("recovery lock: %w", err)
	}
	if !ok {
		conn.Close()
		return nil, ErrRecoveryRunning
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtextextended(?, 0))`, key)
		conn.Close()
	}, nil
}

// start freezes the wallet and records the intent, in one commit.
func (r *Recovery) start(ctx context.Context, id uuid.UUID, to sol.PublicKey, in Intent) (wallet.Wallet, error) {
	var w wallet.Wallet
	err := r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if w, err = wallet.Read(ctx, tx, id, true); err != nil {
			return err
		}
		if w.PublicKey().Equals(to) {
			return fmt.Errorf("the address %s is the wallet's own", to)
		}
		if _, err := tx.NewRaw(`UPDATE wallets SET state = 'frozen' WHERE id = ?`, id).Exec(ctx); err != nil {
			return fmt.Errorf("freeze wallet: %w", err)
		}
		asset := "all"
		if in.Asset != "" {
			asset = strings.ToUpper(in.Asset)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: w.AccountID, At: time.Now().UTC(), Actor: audit.System, Action: ActionRecoveryStarted, Target: wallet.Target(id),
			Details: map[string]any{"wallet_id": id, "to": to.String(), "asset": asset, "operator": in.Operator, "reason": in.Reason,
				"state_before": w.State},
		})
	})
	return w, err
}

// unfinished is the wallet's last recovery transaction when it is not
// recorded as landed: a run interrupted after it was signed. Only the
// last can be: each run follows a transaction to its end before it signs
// the next.
func (r *Recovery) unfinished(ctx context.Context, w *wallet.Wallet) (*attempt, error) {
	var details []byte
	err := r.DB.NewRaw(`SELECT s.details FROM (SELECT target, details FROM audit_log WHERE target = ? AND action = ? ORDER BY at DESC LIMIT 1) s
		WHERE NOT EXISTS (SELECT 1 FROM audit_log d WHERE d.target = s.target AND d.action = ? AND d.details ->> 'signature' = s.details ->> 'signature')`,
		wallet.Target(w.ID), ActionRecoverySigned, ActionRecovered).Scan(ctx, &details)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the last recovery transaction: %w", err)
	}
	var a attempt
	if err := json.Unmarshal(details, &a); err != nil {
		return nil, fmt.Errorf("read the last recovery transaction: %w", err)
	}
	if a.Asset == "" { // written when recoveries moved USDC alone
		a.Asset, a.Units, a.Decimals = "USDC", a.AmountMicros, 6
	}
	return &a, nil
}

// signed records a transaction before it is broadcast.
func (r *Recovery) signed(ctx context.Context, w *wallet.Wallet, a attempt) error {
	return audit.Append(ctx, r.DB, audit.Entry{
		AccountID: w.AccountID, At: time.Now().UTC(), Actor: audit.System, Action: ActionRecoverySigned, Target: wallet.Target(w.ID),
		Details: map[string]any{"wallet_id": w.ID, "signature": a.Signature, "asset": a.Asset, "mint": a.Mint, "decimals": a.Decimals,
			"from": a.From, "units": a.Units, "amount": json.Number(formatUnits(a.Units, a.Decimals)), "to": a.To,
			"last_valid_block_height": a.LastValid, "transaction": a.Transaction},
	})
}

// record appends a transaction that landed to the wallet's audit log.
func (r *Recovery) record(ctx context.Context, w *wallet.Wallet, a attempt) (Moved, error) {
	err := audit.Append(ctx, r.DB, audit.Entry{
		AccountID: w.AccountID, At: time.Now().UTC(), Actor: audit.System, Action: ActionRecovered, Target: wallet.Target(w.ID),
		Details: map[string]any{"wallet_id": w.ID, "to": a.To, "asset": a.Asset, "mint": a.Mint, "from": a.From, "units": a.Units,
			"amount": json.Number(formatUnits(a.Units, a.Decimals)), "signature": a.Signature},
	})
	if err != nil {
		return Moved{}, fmt.Errorf("record %s's transaction %s (it landed): %w", a.Asset, a.Signature, err)
	}
	return a.moved(), nil
}

// failedError is a transaction that failed on chain: it moved nothing.
type failedError struct{ sig, err string }

func (e *failedError) Error() string { return fmt.Sprintf("transaction %s failed: %s", e.sig, e.err) }

// following is how land treats a transaction.
type following int

const (
	// justSigned: a preflight refusal is returned (a *refusedError).
	justSigned following = iota
	// afterRefusal: a transaction of this run the node refused, followed
	// until it can no longer land (another node may have taken it).
	afterRefusal
	// ofEarlierRun: an interrupted run's transaction, which may have
	// landed long ago.
	ofEarlierRun
)

// refusedError is a transaction the node refused at preflight.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return "the node refused the transaction: " + e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// land broadcasts raw until it is confirmed (true), fails on chain (a
// *failedError), or its blockhash expires unseen (false). A refused
// transaction and an earlier run's (which the node's preflight may refuse:
// it landed, or the state changed) are followed without broadcasting; an
// earlier run's is taken as unseen only on a node that keeps transaction
// history, since one without it forgets a transaction after a few minutes.
func (r *Recovery) land(ctx context.Context, raw []byte, sig sol.Signature, lastValid uint64, poll time.Duration, how following) (bool, error) {
	for {
		var pf *solana.PreflightError
		if _, err := r.Client.Broadcast(ctx, raw); errors.As(err, &pf) && !pf.AlreadyProcessed() && !pf.BlockhashNotFound() && how == justSigned {
			return false, &refusedError{err}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(poll):
		}
		st, err := r.Client.Settled(ctx, []sol.Signature{sig}, []uint64{0})
		if err != nil {
			continue // a node's failure: ask again
		}
		s := st.Statuses[0]
		switch {
		case s.Found && s.Err != "":
			return false, &failedError{sig: sig.String(), err: s.Err}
		case s.Found && s.Confirmed:
			return true, nil
		case s.Absent && st.Height > lastValid && how == ofEarlierRun && !st.History:
			return false, fmt.Errorf("the node keeps no transaction history, so it cannot tell whether %s landed: "+
				"run again with an RPC URL of a node that does", sig)
		case s.Absent && st.Height > lastValid:
			return false, nil
		}
	}
}

// either signs with a, or with b for a key a does not hold.
func either(a, b signer.SignFunc) signer.SignFunc {
	return func(ctx context.Context, pub ed25519.PublicKey, message []byte) ([]byte, error) {
		sig, err := a(ctx, pub, message)
		if errors.Is(err, signer.ErrNoKey) {
			return b(ctx, pub, message)
		}
		return sig, err
	}
}

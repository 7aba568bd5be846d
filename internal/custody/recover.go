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
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// Audit actions of a recovery, all by system, in this order: the intent
// (with the wallet's freeze) before anything is signed, each transaction
// signed before it is broadcast, and the balance moved out.
const (
	ActionRecoveryStarted = audit.ActionRecoveryStarted
	ActionRecoverySigned  = audit.ActionRecoverySigned
	ActionRecovered       = audit.ActionRecovered
)

// ErrNothingToRecover is a wallet with no USDC.
var ErrNothingToRecover = errors.New("the wallet holds no USDC")

// ErrRecoveryRunning refuses a second recovery of a wallet while one runs.
var ErrRecoveryRunning = errors.New("another recovery of this wallet is running")

// Recovery moves a wallet's whole USDC balance to To, with the service
// stopped: it needs the database (the wallet's key or its reference), the
// signers and a node, no api, no worker, no Redis.
type Recovery struct {
	DB     *bun.DB
	Signer signer.Signer
	Client *solana.Client
	// FeePayer, when set, pays the network fee and the recipient's token
	// account rent (a keypair of the operator's, signed for by
	// FeePayerSign); else the wallet pays.
	FeePayer     sol.PublicKey
	FeePayerSign signer.SignFunc
	// Attempts bounds how many transactions are signed (each after the
	// previous one's blockhash expired unseen); default 3.
	Attempts int
	// Poll is how often the transaction's status is read; default 500ms.
	Poll time.Duration
}

// Intent is who runs a recovery and why, recorded before anything is
// signed: a recovery moves money on one person's word, outside every
// policy.
type Intent struct {
	Operator string
	Reason   string
}

// Recovered is a finished recovery.
type Recovered struct {
	Signature string
	Amount    money.Micros[money.USD]
	To        string
}

// attempt is a recovery transaction as its wallet.recovery_signed entry
// records it: enough to broadcast it again and to know when it can no
// longer land.
type attempt struct {
	Signature string `json:"signature"`
	// Amount is in base units (the entry's amount is in whole USDC).
	Amount      money.Micros[money.USD] `json:"amount_micros"`
	To          string                  `json:"to"`
	LastValid   uint64                  `json:"last_valid_block_height"`
	Transaction []byte                  `json:"transaction"`
}

// Run moves wallet id's balance to to. First, in one commit, it freezes
// the wallet (the service must not pay from it meanwhile) and records
// wallet.recovery_started with in; each transaction is recorded
// (wallet.recovery_signed) before it is broadcast; the one that lands is
// recorded as wallet.recovered.
//
// A run that was interrupted is finished by the next: the last
// transaction signed and not recorded as landed is broadcast again and
// followed until it lands (then it is the recovery, whatever the new
// run's to) or can no longer land; only then is another signed, for the
// balance read again. Before each new transaction the balance is read
// again too: what a transaction that landed late already moved is never
// sent twice. Runs of one wallet take turns (a PostgreSQL advisory lock).
func (r *Recovery) Run(ctx context.Context, id uuid.UUID, to sol.PublicKey, in Intent) (Recovered, error) {
	if strings.TrimSpace(in.Operator) == "" || strings.TrimSpace(in.Reason) == "" {
		return Recovered{}, errors.New("a recovery needs an operator and a reason")
	}
	unlock, err := r.lock(ctx, id)
	if err != nil {
		return Recovered{}, err
	}
	defer unlock()
	w, err := r.start(ctx, id, to, in)
	if err != nil {
		return Recovered{}, err
	}
	owner := w.PublicKey()
	keys := signer.For(r.Signer, w.Key())
	sign := keys
	if !r.FeePayer.IsZero() {
		sign = either(keys, r.FeePayerSign)
	}
	attempts, poll := r.Attempts, r.Poll
	if attempts <= 0 {
		attempts = 3
	}
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	var done Recovered
	prev, err := r.unfinished(ctx, &w)
	if err != nil {
		return done, err
	}
	if prev != nil {
		sig, err := sol.SignatureFromBase58(prev.Signature)
		if err != nil {
			return done, fmt.Errorf("the last recovery transaction's signature %q: %w", prev.Signature, err)
		}
		landed, err := r.land(ctx, prev.Transaction, sig, prev.LastValid, poll, true)
		var failed *failedError
		switch {
		case errors.As(err, &failed):
			// It moved nothing: sign another.
		case err != nil:
			return done, fmt.Errorf("the last recovery transaction %s: %w", sig, err)
		case landed:
			done = Recovered{Signature: prev.Signature, Amount: prev.Amount, To: prev.To}
			return done, r.record(ctx, &w, done)
		}
	}
	for range attempts {
		bal, err := r.Client.Balance(ctx, owner)
		if err != nil {
			return done, err
		}
		held := money.Micros[money.USD](bal.Units(r.Client.Network().USDCMint()))
		if held == 0 {
			if done.Signature != "" {
				break // the previous transaction landed after all
			}
			return done, ErrNothingToRecover
		}
		bh, err := r.Client.LatestBlockhash(ctx)
		if err != nil {
			return done, err
		}
		tx, err := r.Client.BuildTransfer(solana.Transfer{Owner: owner, FeePayer: r.FeePayer, To: to, Amount: held,
			Memo: "recovery of wallet " + id.String()}, bh)
		if err != nil {
			return done, fmt.Errorf("build transfer: %w", err)
		}
		raw, sig, err := solana.Sign(ctx, tx, sign)
		if err != nil {
			return done, err
		}
		a := attempt{Signature: sig.String(), Amount: held, To: to.String(), LastValid: bh.LastValidBlockHeight, Transaction: raw}
		if err := r.signed(ctx, &w, a); err != nil {
			return done, err // not broadcast: nothing went out
		}
		done = Recovered{Signature: a.Signature, Amount: a.Amount, To: a.To}
		landed, err := r.land(ctx, raw, sig, bh.LastValidBlockHeight, poll, false)
		if err != nil {
			return done, err
		}
		if landed {
			return done, r.record(ctx, &w, done)
		}
	}
	if done.Signature != "" {
		if bal, err := r.Client.Balance(ctx, owner); err == nil && bal.Units(r.Client.Network().USDCMint()) == 0 {
			return done, r.record(ctx, &w, done)
		}
	}
	return done, fmt.Errorf("no transaction landed after %d attempts; run again", attempts)
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
		if _, err := tx.NewRaw(`UPDATE wallets SET state = 'frozen' WHERE id = ?`, id).Exec(ctx); err != nil {
			return fmt.Errorf("freeze wallet: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: w.AccountID, At: time.Now().UTC(), Actor: audit.System, Action: ActionRecoveryStarted, Target: wallet.Target(id),
			Details: map[string]any{"wallet_id": id, "to": to.String(), "operator": in.Operator, "reason": in.Reason, "state_before": w.State},
		})
	})
	return w, err
}

// unfinished is the wallet's last recovery transaction when it is not
// recorded as landed: a run interrupted after it was signed.
func (r *Recovery) unfinished(ctx context.Context, w *wallet.Wallet) (*attempt, error) {
	var details []byte
	err := r.DB.NewRaw(`SELECT s.details FROM audit_log s WHERE s.target = ? AND s.action = ?
		AND NOT EXISTS (SELECT 1 FROM audit_log d WHERE d.target = s.target AND d.action = ? AND d.details ->> 'signature' = s.details ->> 'signature')
		ORDER BY s.at DESC LIMIT 1`, wallet.Target(w.ID), ActionRecoverySigned, ActionRecovered).Scan(ctx, &details)
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
	return &a, nil
}

// signed records a transaction before it is broadcast.
func (r *Recovery) signed(ctx context.Context, w *wallet.Wallet, a attempt) error {
	return audit.Append(ctx, r.DB, audit.Entry{
		AccountID: w.AccountID, At: time.Now().UTC(), Actor: audit.System, Action: ActionRecoverySigned, Target: wallet.Target(w.ID),
		Details: map[string]any{"wallet_id": w.ID, "signature": a.Signature, "amount": a.Amount, "amount_micros": int64(a.Amount), "to": a.To,
			"last_valid_block_height": a.LastValid, "transaction": a.Transaction},
	})
}

// failedError is a transaction that failed on chain: it moved nothing.
type failedError struct{ sig, err string }

func (e *failedError) Error() string { return fmt.Sprintf("transaction %s failed: %s", e.sig, e.err) }

// land broadcasts raw until it is confirmed (true), fails on chain (a
// *failedError), or its blockhash expires unseen (false). An earlier
// run's transaction (earlier) may be refused by the node's preflight (it
// landed, or the state changed): it is followed without broadcasting, and
// is taken as unseen only on a node that keeps transaction history, since
// one without it forgets a transaction after a few minutes.
func (r *Recovery) land(ctx context.Context, raw []byte, sig sol.Signature, lastValid uint64, poll time.Duration, earlier bool) (bool, error) {
	for {
		var pf *solana.PreflightError
		if _, err := r.Client.Broadcast(ctx, raw); errors.As(err, &pf) && !pf.AlreadyProcessed() && !pf.BlockhashNotFound() && !earlier {
			return false, fmt.Errorf("the node refused the transaction: %w", err)
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
		case s.Absent && st.Height > lastValid && earlier && !st.History:
			return false, fmt.Errorf("the node keeps no transaction history, so it cannot tell whether %s landed: "+
				"run again with an RPC URL of a node that does", sig)
		case s.Absent && st.Height > lastValid:
			return false, nil
		}
	}
}

// record freezes the wallet (the service, started again, must not pay from
// it) and appends the recovery to its audit log.
func (r *Recovery) record(ctx context.Context, w *wallet.Wallet, done Recovered) error {
	return r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`UPDATE wallets SET state = 'frozen' WHERE id = ?`, w.ID).Exec(ctx); err != nil {
			return fmt.Errorf("freeze wallet: %w", err)
		}
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: w.AccountID,
			At:        time.Now().UTC(),
			Actor:     audit.System,
			Action:    ActionRecovered,
			Target:    wallet.Target(w.ID),
			Details:   map[string]any{"wallet_id": w.ID, "to": done.To, "amount": done.Amount, "signature": done.Signature},
		})
	})
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

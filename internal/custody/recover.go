package custody

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/usdc"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// ActionRecovered is the audit action of a wallet's balance moved out by
// the recovery command.
const ActionRecovered = "wallet.recovered"

// ErrNothingToRecover is a wallet with no USDC.
var ErrNothingToRecover = errors.New("the wallet holds no USDC")

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

// Recovered is a finished recovery.
type Recovered struct {
	Signature string
	Amount    usdc.Micros
}

// Run moves wallet id's balance to to, freezes the wallet and records it
// in its audit log. Before each new transaction it reads the balance
// again: what a transaction that landed late already moved is never sent
// twice.
func (r *Recovery) Run(ctx context.Context, id uuid.UUID, to sol.PublicKey) (Recovered, error) {
	w, err := wallet.Read(ctx, r.DB, id, false)
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
	for range attempts {
		bal, err := r.Client.Balance(ctx, owner)
		if err != nil {
			return done, err
		}
		if bal.USDC == 0 {
			if done.Signature != "" {
				break // the previous transaction landed after all
			}
			return done, ErrNothingToRecover
		}
		bh, err := r.Client.LatestBlockhash(ctx)
		if err != nil {
			return done, err
		}
		tx, err := r.Client.BuildTransfer(solana.Transfer{Owner: owner, FeePayer: r.FeePayer, To: to, Amount: bal.USDC,
			Memo: "recovery of wallet " + id.String()}, bh)
		if err != nil {
			return done, fmt.Errorf("build transfer: %w", err)
		}
		raw, sig, err := solana.Sign(ctx, tx, sign)
		if err != nil {
			return done, err
		}
		done = Recovered{Signature: sig.String(), Amount: bal.USDC}
		landed, err := r.land(ctx, raw, sig, bh.LastValidBlockHeight, poll)
		if err != nil {
			return done, err
		}
		if landed {
			return done, r.record(ctx, &w, to, done)
		}
	}
	if done.Signature != "" {
		if bal, err := r.Client.Balance(ctx, owner); err == nil && bal.USDC == 0 {
			return done, r.record(ctx, &w, to, done)
		}
	}
	return done, fmt.Errorf("no transaction landed after %d attempts; run again", attempts)
}

// land broadcasts raw until it is confirmed (true), fails on chain (an
// error), or its blockhash expires unseen (false).
func (r *Recovery) land(ctx context.Context, raw []byte, sig sol.Signature, lastValid uint64, poll time.Duration) (bool, error) {
	for {
		var pf *solana.PreflightError
		if _, err := r.Client.Broadcast(ctx, raw); errors.As(err, &pf) && !pf.AlreadyProcessed() && !pf.BlockhashNotFound() {
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
			return false, fmt.Errorf("transaction %s failed: %s", sig, s.Err)
		case s.Found && s.Confirmed:
			return true, nil
		case s.Absent && st.Height > lastValid:
			return false, nil
		}
	}
}

// record freezes the wallet (the service, started again, must not pay from
// it) and appends the recovery to its audit log.
func (r *Recovery) record(ctx context.Context, w *wallet.Wallet, to sol.PublicKey, done Recovered) error {
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
			Details:   map[string]any{"wallet_id": w.ID, "to": to.String(), "amount": done.Amount, "signature": done.Signature},
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

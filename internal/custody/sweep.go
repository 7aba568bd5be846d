package custody

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// sweeper moves one wallet's holdings, one transaction at a time.
type sweeper struct {
	r        *Recovery
	w        *wallet.Wallet
	owner    sol.PublicKey
	to       sol.PublicKey
	sign     signer.SignFunc
	attempts int
	poll     time.Duration
	memo     string
}

func (r *Recovery) sweeper(w *wallet.Wallet, to sol.PublicKey) *sweeper {
	s := &sweeper{r: r, w: w, owner: w.PublicKey(), to: to, sign: signer.For(r.Signer, w.Key()),
		attempts: r.Attempts, poll: r.Poll, memo: "recovery of wallet " + w.ID.String()}
	if !r.FeePayer.IsZero() {
		s.sign = either(s.sign, r.FeePayerSign)
	}
	if s.attempts <= 0 {
		s.attempts = 3
	}
	if s.poll <= 0 {
		s.poll = 500 * time.Millisecond
	}
	return s
}

// errEmpty is a holding with nothing to move.
var errEmpty = errors.New("nothing to move")

// goneError is a holding that is not moved: emptied by a transaction
// that is not the recovery's (the wallet's key used elsewhere), frozen by
// its issuer, or SOL too little to move.
type goneError struct{ what string }

func (e *goneError) Error() string { return e.what }

// transfer is one holding to move: how much of it can move now (read
// from the chain each time), and the transaction that moves it.
type transfer struct {
	asset    string
	mint     string
	decimals uint8
	from     sol.PublicKey
	// read is what can move now; a *goneError when it cannot.
	read  func(ctx context.Context) (uint64, error)
	build func(units uint64, bh solana.Blockhash) (*sol.Transaction, error)
}

// finishInterrupted follows an interrupted run's last transaction to its
// end; ok when it landed (it is then recorded).
func (s *sweeper) finishInterrupted(ctx context.Context) (Moved, bool, error) {
	prev, err := s.r.unfinished(ctx, s.w)
	if err != nil || prev == nil {
		return Moved{}, false, err
	}
	sig, err := sol.SignatureFromBase58(prev.Signature)
	if err != nil {
		return Moved{}, false, fmt.Errorf("the last recovery transaction's signature %q: %w", prev.Signature, err)
	}
	landed, err := s.r.land(ctx, prev.Transaction, sig, prev.LastValid, s.poll, ofEarlierRun)
	var failed *failedError
	switch {
	case errors.As(err, &failed):
		return Moved{}, false, nil // it moved nothing
	case err != nil:
		return Moved{}, false, fmt.Errorf("the last recovery transaction %s: %w", sig, err)
	case !landed:
		return Moved{}, false, nil
	}
	m, err := s.r.record(ctx, s.w, *prev)
	return m, err == nil, err
}

// held is a token account to empty.
type held struct {
	token   solana.Token
	account solana.HeldAccount
}

// plan lists the token accounts of tokens that hold something, and
// (their holdings named) those frozen by their issuer. When the wallet
// pays, it refuses to start unless the wallet's SOL covers every
// transaction's fee and the rent of each recipient account to open:
// rather than stop with some assets moved and others stuck.
func (s *sweeper) plan(ctx context.Context, tokens []solana.Token) ([]held, []string, error) {
	var plan []held
	var left []string
	rents := map[int]uint64{} // token index → what an account of it costs to open
	for i, tk := range tokens {
		accts, err := s.r.Client.HeldAccounts(ctx, s.owner, tk)
		if err != nil {
			return nil, nil, fmt.Errorf("read the wallet's %s accounts: %w", tk.Symbol, err)
		}
		for _, a := range accts {
			switch {
			case a.Units == 0:
			case a.Frozen:
				left = append(left, fmt.Sprintf("%s %s in account %s: frozen by the mint's freeze authority", formatUnits(a.Units, tk.Decimals), tk.Symbol, a.Address))
			default:
				plan = append(plan, held{tk, a})
				rents[i] = max(rents[i], a.Lamports)
			}
		}
	}
	if len(plan) == 0 || !s.r.FeePayer.IsZero() {
		return plan, left, nil
	}
	addrs := []sol.PublicKey{s.owner}
	var idx []int
	for i, tk := range tokens {
		if _, ok := rents[i]; !ok {
			continue
		}
		ata, err := solana.AssociatedAccount(s.to, tk)
		if err != nil {
			return nil, nil, err
		}
		addrs, idx = append(addrs, ata), append(idx, i)
	}
	st, err := s.r.Client.Accounts(ctx, addrs)
	if err != nil {
		return nil, nil, fmt.Errorf("read the wallet's SOL: %w", err)
	}
	need := uint64(len(plan)) * solana.BaseFeeLamports
	var opened []string
	for k, i := range idx {
		if !st[1+k].Exists {
			need += rents[i]
			opened = append(opened, tokens[i].Symbol)
		}
	}
	if have := st[0].Lamports; have < need {
		what := fmt.Sprintf("the fees of %d transactions", len(plan))
		if len(opened) > 0 {
			what += fmt.Sprintf(", and the rent of %s's %s accounts", s.to, strings.Join(opened, ", "))
		}
		return nil, nil, fmt.Errorf("the wallet holds %s SOL; moving its tokens needs %s SOL (%s): add SOL to it, or have a fee payer pay",
			formatUnits(have, 9), formatUnits(need, 9), what)
	}
	return plan, left, nil
}

// tokenTransfer empties the wallet's token account from of tk.
func (s *sweeper) tokenTransfer(tk solana.Token, from sol.PublicKey) transfer {
	return transfer{asset: tk.Symbol, mint: tk.Mint.String(), decimals: tk.Decimals, from: from,
		read: func(ctx context.Context) (uint64, error) {
			h, err := s.r.Client.HeldAccountAt(ctx, from, s.owner, tk)
			if err == nil && h.Frozen && h.Units > 0 {
				return 0, &goneError{fmt.Sprintf("%s %s in account %s: frozen by the mint's freeze authority", formatUnits(h.Units, tk.Decimals), tk.Symbol, from)}
			}
			return h.Units, err
		},
		build: func(units uint64, bh solana.Blockhash) (*sol.Transaction, error) {
			return solana.BuildSweep(solana.Sweep{Token: tk, Owner: s.owner, FeePayer: s.r.FeePayer, From: from, To: s.to, Units: units, Memo: s.memo}, bh)
		},
	}
}

// solTransfer moves the wallet's lamports, less the fee when it pays:
// it is left with none. An address holding no SOL can only receive the
// rent-exempt minimum or more.
func (s *sweeper) solTransfer() transfer {
	fee := uint64(solana.BaseFeeLamports)
	if !s.r.FeePayer.IsZero() {
		fee = 0
	}
	return transfer{asset: SOL, decimals: 9, from: s.owner,
		read: func(ctx context.Context) (uint64, error) {
			st, err := s.r.Client.Accounts(ctx, []sol.PublicKey{s.owner, s.to})
			if err != nil {
				return 0, fmt.Errorf("read the wallet's SOL: %w", err)
			}
			have := st[0].Lamports
			switch {
			case have == 0:
				return 0, nil
			case have <= fee:
				return 0, &goneError{fmt.Sprintf("%s SOL: no more than the fee of moving it", formatUnits(have, 9))}
			case st[1].Lamports == 0 && have-fee < solana.RentExemptEmptyLamports:
				return 0, &goneError{fmt.Sprintf("%s SOL: too little to open %s, which holds none (an account needs %s SOL)",
					formatUnits(have, 9), s.to, formatUnits(solana.RentExemptEmptyLamports, 9))}
			}
			return have - fee, nil
		},
		build: func(units uint64, bh solana.Blockhash) (*sol.Transaction, error) {
			return solana.BuildSOLSweep(s.owner, s.r.FeePayer, s.to, units, s.memo, bh)
		},
	}
}

// sweep moves what t holds: it reads the amount, signs, records and
// broadcasts a transaction and follows it until it lands; one whose
// blockhash expired unseen is followed by another, for the amount read
// again. It answers errEmpty when there was nothing to move, and a
// *goneError when what was there cannot move (its issuer froze it, its
// transfer failed on chain) or left by another transaction.
func (s *sweeper) sweep(ctx context.Context, t transfer) (Moved, error) {
	var last *attempt
	for i := 0; ; i++ {
		units, err := t.read(ctx)
		if err != nil {
			return Moved{}, err
		}
		if units == 0 {
			if last == nil {
				return Moved{}, errEmpty
			}
			return s.emptied(ctx, t, *last)
		}
		if i == s.attempts {
			return Moved{}, fmt.Errorf("%s: no transaction landed after %d attempts; run again", t.asset, s.attempts)
		}
		bh, err := s.r.Client.LatestBlockhash(ctx)
		if err != nil {
			return Moved{}, err
		}
		tx, err := t.build(units, bh)
		if err != nil {
			return Moved{}, fmt.Errorf("build the %s transfer: %w", t.asset, err)
		}
		raw, sig, err := solana.Sign(ctx, tx, s.sign)
		if err != nil {
			return Moved{}, err
		}
		a := attempt{Signature: sig.String(), Asset: t.asset, Mint: t.mint, Decimals: t.decimals, From: t.from.String(), Units: units,
			To: s.to.String(), LastValid: bh.LastValidBlockHeight, Transaction: raw}
		if err := s.r.signed(ctx, s.w, a); err != nil {
			return Moved{}, err // not broadcast: nothing went out
		}
		last = &a
		landed, err := s.r.land(ctx, raw, sig, bh.LastValidBlockHeight, s.poll, justSigned)
		var refused *refusedError
		if errors.As(err, &refused) {
			// Most likely it never went out, and another would be refused
			// alike (a frozen recipient account, a mint's transfer rule);
			// but a node of the pool may have taken it: it is followed
			// until it can no longer land, and only then does the run go
			// on to the other holdings.
			if landed, err = s.r.land(ctx, raw, sig, bh.LastValidBlockHeight, s.poll, afterRefusal); err == nil && !landed {
				return Moved{}, &goneError{fmt.Sprintf("%s %s in %s: %s", formatUnits(units, t.decimals), t.asset, t.from, refused.Error())}
			}
		}
		var failed *failedError
		if errors.As(err, &failed) {
			// It moved nothing, and another would fail alike (a frozen
			// recipient account, a mint's transfer rule): the other
			// holdings still move. Unless what it was to move is gone.
			if now, err := t.read(ctx); err == nil && now == 0 {
				return Moved{}, errEmpty
			}
			return Moved{}, &goneError{fmt.Sprintf("%s %s in %s: its transfer failed on chain (%s, transaction %s)",
				formatUnits(units, t.decimals), t.asset, t.from, failed.err, sig)}
		}
		if err != nil {
			return Moved{}, fmt.Errorf("%s: %w", t.asset, err)
		}
		if landed {
			return s.r.record(ctx, s.w, a)
		}
	}
}

// emptied settles a holding found empty after its transaction last
// expired unseen: that transaction landed after all (a node that saw it
// late), or another one took the money.
func (s *sweeper) emptied(ctx context.Context, t transfer, last attempt) (Moved, error) {
	sig, err := sol.SignatureFromBase58(last.Signature)
	if err != nil {
		return Moved{}, err
	}
	st, err := s.r.Client.Settled(ctx, []sol.Signature{sig}, []uint64{0})
	if err != nil {
		return Moved{}, fmt.Errorf("%s was emptied; whether by %s cannot be told now (run again): %w", t.from, sig, err)
	}
	if got := st.Statuses[0]; got.Found && got.Confirmed && got.Err == "" {
		return s.r.record(ctx, s.w, last)
	}
	return Moved{}, &goneError{fmt.Sprintf("%s %s in %s: moved out by a transaction that is not this recovery's", formatUnits(last.Units, last.Decimals), t.asset, t.from)}
}

// formatUnits writes units of a token of decimals as a decimal number,
// exactly ("12.5", "0.000001", "3").
func formatUnits(units uint64, decimals uint8) string {
	s := strconv.FormatUint(units, 10)
	d := int(decimals)
	if d == 0 {
		return s
	}
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	whole, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

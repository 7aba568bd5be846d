package bench

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// chaosDepositor pays EURC (SPL Token, a plain transfer) and PYUSD
// (Token-2022, transferChecked) into the stack's wallets from a keypair
// the service does not control, a few in each phase of the chaos test,
// and remembers each deposit's signature and amount.
type chaosDepositor struct {
	key    sol.PrivateKey
	client *solana.Client
	assets []asset.Asset

	mu   sync.Mutex
	sent map[string]int64 // signature → base units
	n    int
}

func newChaosDepositor(t testing.TB, ln *localnettest.Localnet) *chaosDepositor {
	t.Helper()
	d := &chaosDepositor{key: sol.NewWallet().PrivateKey, client: solana.NewClient(ln.URL, solana.Devnet, 10*time.Second),
		sent: map[string]int64{}}
	ln.SetLamports(t, d.key.PublicKey().String(), 10*solana.LamportsPerSOL)
	for _, symbol := range []string{"EURC", "PYUSD"} {
		a, ok := asset.Defaults().Find(solana.Devnet, symbol)
		if !ok {
			t.Fatalf("no devnet %s", symbol)
		}
		d.assets = append(d.assets, a)
		ln.SetTokenBalance(t, d.key.PublicKey().String(), a.Mint.String(), 1_000_000_000)
	}
	return d
}

// pay sends one deposit of each asset to owner and waits until each is
// confirmed.
func (d *chaosDepositor) pay(t testing.TB, owner string) {
	t.Helper()
	to := sol.MustPublicKeyFromBase58(owner)
	for _, a := range d.assets {
		d.mu.Lock()
		d.n++
		units := int64(10_000*d.n + 7)
		d.mu.Unlock()
		sig, err := d.send(a, to, uint64(units))
		if err != nil {
			t.Fatalf("pay %s to %s: %v", a.Symbol, owner, err)
		}
		d.mu.Lock()
		d.sent[sig] = units
		d.mu.Unlock()
	}
}

func (d *chaosDepositor) send(a asset.Asset, to sol.PublicKey, units uint64) (string, error) {
	ctx := context.Background()
	from := d.key.PublicKey()
	src, _ := solana.AssociatedToken(from, a.Mint, a.Program)
	dst, err := solana.AssociatedToken(to, a.Mint, a.Program)
	if err != nil {
		return "", err
	}
	create := sol.NewInstruction(sol.SPLAssociatedTokenAccountProgramID, sol.AccountMetaSlice{
		sol.Meta(from).WRITE().SIGNER(), sol.Meta(dst).WRITE(), sol.Meta(to), sol.Meta(a.Mint),
		sol.Meta(sol.SystemProgramID), sol.Meta(a.Program),
	}, []byte{1})
	var move sol.Instruction
	if a.Program.Equals(sol.Token2022ProgramID) {
		data := make([]byte, 10)
		data[0] = 12 // TransferChecked: the only transfer PYUSD's mint accepts
		binary.LittleEndian.PutUint64(data[1:9], units)
		data[9] = a.Decimals
		move = sol.NewInstruction(a.Program, sol.AccountMetaSlice{sol.Meta(src).WRITE(), sol.Meta(a.Mint), sol.Meta(dst).WRITE(), sol.Meta(from).SIGNER()}, data)
	} else {
		data := make([]byte, 9)
		data[0] = 3 // Transfer
		binary.LittleEndian.PutUint64(data[1:9], units)
		move = sol.NewInstruction(a.Program, sol.AccountMetaSlice{sol.Meta(src).WRITE(), sol.Meta(dst).WRITE(), sol.Meta(from).SIGNER()}, data)
	}
	bh, err := d.client.LatestBlockhash(ctx)
	if err != nil {
		return "", err
	}
	tx, err := sol.NewTransaction([]sol.Instruction{create, move}, bh.Hash, sol.TransactionPayer(from))
	if err != nil {
		return "", err
	}
	raw, sig, err := solana.Sign(ctx, tx, func(_ context.Context, _ ed25519.PublicKey, msg []byte) ([]byte, error) {
		return ed25519.Sign(ed25519.PrivateKey(d.key), msg), nil
	})
	if err != nil {
		return "", err
	}
	if _, err := d.client.Broadcast(ctx, raw); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st, err := d.client.SignatureStatuses(ctx, false, []sol.Signature{sig})
		if err == nil && st[0].Found && st[0].Confirmed {
			return sig.String(), nil
		}
	}
	return "", fmt.Errorf("%s not confirmed in 30 s", sig)
}

// check waits until every deposit paid is recorded, then requires each
// exactly once, with its amount and one tx.received.
func (d *chaosDepositor) check(t testing.TB, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	sigs := make([]string, 0, len(d.sent))
	for s := range d.sent {
		sigs = append(sigs, s)
	}
	var rows []struct {
		Signature string `bun:"signature"`
		Asset     string `bun:"asset"`
		Amount    int64  `bun:"amount"`
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		rows = rows[:0]
		if err := db.NewRaw(`SELECT signature, asset, amount FROM deposits WHERE signature IN (?)`, bun.List(sigs)).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) >= len(sigs) || time.Now().After(deadline) {
			break
		}
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.Signature]++
		if r.Amount != d.sent[r.Signature] || (r.Asset != "eurc" && r.Asset != "pyusd") {
			t.Errorf("deposit %+v: sent %d", r, d.sent[r.Signature])
		}
	}
	for _, s := range sigs {
		if seen[s] != 1 {
			t.Errorf("deposit %s recorded %d times", s, seen[s])
		}
	}
	var events int
	if err := db.NewRaw(`SELECT count(*) FROM events WHERE kind = 'tx.received' AND data->>'signature' IN (?)`, bun.List(sigs)).Scan(ctx, &events); err != nil {
		t.Fatal(err)
	}
	if events != len(sigs) {
		t.Errorf("%d tx.received events for %d EURC and PYUSD deposits", events, len(sigs))
	}
}

package custody_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// keystore is a worker's keystore holding keys, the first the current one.
func keystore(t *testing.T, keys ...wallettest.MasterKey) *signer.Keystore {
	t.Helper()
	var list string
	for i, k := range keys {
		if i > 0 {
			list += ","
		}
		list += k.Private
	}
	ks, err := signer.NewKeystore(list)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// fleet is an account's funded wallets on the localnet, and an engine to
// pay from them.
type fleet struct {
	db      *bun.DB
	acc     auth.Account
	wallets []wallet.Wallet
	eng     *payment.Engine
}

func newFleet(t *testing.T, keys signer.Maker, n int) *fleet {
	t.Helper()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	f := &fleet{db: db, acc: wallettest.Account(t, db), eng: &payment.Engine{DB: db, Nodes: map[solana.Network]payment.Node{
		solana.Devnet: payment.NewNode(ln.URL, solana.Devnet, 5*time.Second),
	}}}
	for i := range n {
		f.add(t, ln, keys, fmt.Sprintf("w%d", i))
	}
	return f
}

func (f *fleet) add(t *testing.T, ln *localnettest.Localnet, keys signer.Maker, label string) wallet.Wallet {
	t.Helper()
	w := wallettest.Create(t, f.db, keys, f.acc.ID, label)
	ln.SetLamports(t, w.Pubkey, 1_000_000_000)
	ln.SetTokenBalance(t, w.Pubkey, solana.DevnetUSDCMint.String(), 50_000_000)
	f.wallets = append(f.wallets, w)
	return w
}

// pay sends 0.01 USDC from w and returns its outcome.
func (f *fleet) pay(ctx context.Context, w wallet.Wallet) (*payment.Outcome, error) {
	r := payment.Request{ID: uuid.New(), AccountID: f.acc.ID, WalletID: w.ID, Network: solana.Devnet,
		To: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: 10_000}
	if err := payment.Submit(ctx, f.db, &r, 10*time.Second); err != nil {
		return nil, err
	}
	if err := f.eng.Decide(ctx, r.ID); err != nil {
		return nil, err
	}
	return payment.Final(ctx, f.db, r.ID)
}

func (f *fleet) mustPay(t *testing.T, w wallet.Wallet) {
	t.Helper()
	o, err := f.pay(context.Background(), w)
	if err != nil || o == nil || o.Status != payment.Sent {
		t.Fatalf("wallet %s: outcome %+v, %v", w.Label, o, err)
	}
}

// Rotation while sends run: every send meanwhile is signed, every secret
// (wallets', webhook signing secrets) ends sealed to the new key, and with
// the old key removed from the worker every wallet still pays and every
// webhook secret still opens.
func TestRotate_UnderLoadThenTheOldKeyIsRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old, next := wallettest.NewMasterKey(t), wallettest.NewMasterKey(t)
	f := newFleet(t, old.Sealer, 4)
	url := "https://example.com/hook"
	ep, _, err := webhook.CreateEndpoint(ctx, f.db, old.Sealer, f.acc.ID, webhook.Settings{URL: &url, Events: []string{"tx.sent"}}, 0)
	if err != nil {
		t.Fatal(err)
	}

	// During the rotation the worker holds both keys, the new one first.
	f.eng.Signer = keystore(t, next, old)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	errs := make(chan error, len(f.wallets))
	for _, w := range f.wallets {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				o, err := f.pay(ctx, w)
				if err != nil || o == nil || o.Status != payment.Sent {
					errs <- fmt.Errorf("wallet %s during rotation: outcome %+v, %v", w.Label, o, err)
					return
				}
				sent.Add(1)
			}
		})
	}
	for sent.Load() < 4 {
		time.Sleep(10 * time.Millisecond)
	}
	r, err := custody.Rotate(ctx, f.db, keystore(t, next, old))
	for sent.Load() < 12 && len(errs) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.Wallets != 4 || r.WebhookSecrets != 1 {
		t.Fatalf("re-sealed %+v, want 4 wallets and 1 webhook secret", r)
	}
	ids, err := worker.SealedKeyIDs(ctx, f.db)
	if err != nil || len(ids) != 1 || ids[0] != next.Sealer.KeyID() {
		t.Fatalf("secrets sealed to %v (%v), want only %s", ids, err, next.Sealer.KeyID())
	}

	// The old key removed.
	only := keystore(t, next)
	if err := worker.CheckKeystore(ctx, f.db, only); err != nil {
		t.Fatal(err)
	}
	f.eng.Signer = only
	for _, w := range f.wallets {
		f.mustPay(t, w)
	}
	var sealed signer.Sealed
	if err := f.db.NewSelect().Table("webhook_endpoints").Column("secret_key_id", "secret_sealed").
		Where("id = ?", ep.ID).Scan(ctx, &sealed.KeyID, &sealed.Ciphertext); err != nil {
		t.Fatal(err)
	}
	if _, err := only.OpenValue(sealed, webhook.SecretBinding(ep.ID)); err != nil {
		t.Fatalf("webhook secret after rotation: %v", err)
	}
	t.Logf("%d sends during the rotation", sent.Load())
}

// A second run re-seals what an API still sealing to the old key made
// after the first, and a third finds nothing left.
func TestRotate_RunAgainTakesWhatWasSealedMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old, next := wallettest.NewMasterKey(t), wallettest.NewMasterKey(t)
	f := newFleet(t, old.Sealer, 0)
	ln := localnettest.Shared(t)
	f.add(t, ln, old.Sealer, "before")
	ks := keystore(t, next, old)
	if r, err := custody.Rotate(ctx, f.db, ks); err != nil || r.Total() != 1 {
		t.Fatalf("first run %+v, %v", r, err)
	}
	f.add(t, ln, old.Sealer, "meanwhile")
	if r, err := custody.Rotate(ctx, f.db, ks); err != nil || r.Wallets != 1 {
		t.Fatalf("second run %+v, %v", r, err)
	}
	if r, err := custody.Rotate(ctx, f.db, ks); err != nil || r.Total() != 0 {
		t.Fatalf("third run %+v, %v", r, err)
	}
	f.eng.Signer = keystore(t, next)
	for _, w := range f.wallets {
		f.mustPay(t, w)
	}
}

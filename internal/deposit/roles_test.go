package deposit_test

import (
	"context"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// Accounts watched before their roles were kept (no role) are named at
// the next scan: the wallet's associated account as such, any other as
// listed; nothing is watched twice, and deposits are found as before.
func TestWatcher_AccountsWatchedBeforeRolesAreNamed(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	db := pgtest.New(t)
	_, a := wallettest.New(t, db)
	ctx := context.Background()
	ata, _ := solana.Devnet.AssociatedUSDC(a.PublicKey())
	from := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	other := from.NewTokenAccount(t, a.PublicKey())
	first := from.TransferUSDCToAccount(t, other, 500_000)
	since := time.Now().Add(-time.Minute)
	for _, r := range []struct {
		address sol.PublicKey
		asset   string
	}{{a.PublicKey(), "sol"}, {ata, "usdc"}, {other, "usdc"}} {
		if _, err := db.NewRaw(`INSERT INTO watched_accounts (address, network, wallet_id, asset, since) VALUES (?, 'devnet', ?, ?, ?)`,
			r.address.String(), a.ID, r.asset, since).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.NewRaw(`UPDATE watched_accounts SET role = NULL`).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	sig := from.TransferUSDC(t, a.PublicKey(), 1_000_000)
	watcher, _ := newWatcher(ln, db)
	if _, err := watcher.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Address string `bun:"address"`
		Role    string `bun:"role"`
	}
	if err := db.NewRaw(`SELECT address, coalesce(role, '') AS role FROM watched_accounts WHERE wallet_id = ?`, a.ID).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{a.Pubkey: "address", ata.String(): "associated", other.String(): "listed"}
	if len(rows) != len(want) {
		t.Fatalf("watched %+v, want %v", rows, want)
	}
	for _, r := range rows {
		if want[r.Address] != r.Role {
			t.Fatalf("watched %+v, want %v", rows, want)
		}
	}
	if d := depositsOf(t, db, a); len(d) != 2 || d[0].Signature != first || d[1].Signature != sig {
		t.Fatalf("deposits %+v, want %s and %s", d, first, sig)
	}
}

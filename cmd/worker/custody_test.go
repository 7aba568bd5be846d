package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// offline is a stopped service's database with one local wallet, and
// the environment the operator's commands get: the database, the master
// key and the localnet, and a Redis nobody listens on.
type offline struct {
	db  *bun.DB
	env map[string]string
	w   wallet.Wallet
	ln  *localnettest.Localnet
}

func newOffline(t *testing.T, usdcMicros, lamports uint64) *offline {
	t.Helper()
	url := pgtest.NewURL(t, true)
	db, err := postgres.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	priv, pub, _ := signer.GenerateMasterKey()
	sealer, _ := signer.NewSealer(pub)
	acc, err := auth.CreateAccount(context.Background(), db, solana.Devnet)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wallet.Create(context.Background(), db, sealer, acc.ID, "system", "w", policy.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ln := localnettest.Shared(t)
	ln.SetLamports(t, w.Pubkey, lamports)
	ln.SetTokenBalance(t, w.Pubkey, solana.DevnetUSDCMint.String(), usdcMicros)
	return &offline{db: db, w: w, ln: ln, env: map[string]string{
		"DATABASE_URL": url, "WALLET_MASTER_KEY": priv, "SOLANA_RPC_URL_DEVNET": ln.URL, "SOLANA_RPC_URL_MAINNET": ln.URL,
		"SOLANA_LOCAL_CHAIN": "true", "REDIS_URL": "redis://127.0.0.1:1/0", "LOG_LEVEL": "error",
	}}
}

func (o *offline) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return o.env[k] }, &out)
	return out.String(), err
}

func (o *offline) usdc(t *testing.T, owner string) money.Micros[money.USD] {
	t.Helper()
	b, err := solana.NewClient(o.ln.URL, solana.Devnet, 0).Balance(context.Background(), sol.MustPublicKeyFromBase58(owner))
	if err != nil {
		t.Fatal(err)
	}
	return money.Micros[money.USD](b.Units(solana.Devnet.USDCMint()))
}

// `worker recover` moves a wallet's whole balance with the service
// stopped (no api, no worker, Redis unreachable): the wallet paying the
// fees and the address's accounts' rent itself, or an operator's keypair
// paying them for a wallet without SOL.
// The wallet is then frozen and the recovery is in its audit log.
func TestRecover_MovesTheWholeBalanceWithTheServiceStopped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lamports uint64
		feePayer bool
	}{
		{"the wallet pays the fee", 1_000_000_000, false},
		{"a keypair file pays the fee", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOffline(t, 12_345_678, tc.lamports)
			o.ln.SetTokenBalance(t, o.w.Pubkey, devnetToken(t, "PYUSD").Mint.String(), 2_000_000)
			to := sol.NewWallet().PublicKey().String()
			args := []string{"recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "test"}
			if tc.feePayer {
				pub, priv, _ := ed25519.GenerateKey(nil)
				o.ln.SetLamports(t, sol.PublicKeyFromBytes(pub).String(), 1_000_000_000)
				ints := make([]int, len(priv))
				for i, b := range priv {
					ints[i] = int(b)
				}
				raw, _ := json.Marshal(ints)
				file := filepath.Join(t.TempDir(), "payer.json")
				if err := os.WriteFile(file, raw, 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--fee-payer", file)
			}
			out, err := o.run(t, args...)
			if err != nil {
				t.Fatalf("recover: %v (%s)", err, out)
			}
			if got := o.usdc(t, to); got != 12_345_678 {
				t.Fatalf("the address received %d, want the whole balance", got)
			}
			if got := o.usdc(t, o.w.Pubkey); got != 0 {
				t.Fatalf("the wallet still holds %d", got)
			}
			// PYUSD (Token-2022) too, its account opened by whoever pays.
			if got, left := o.holdings(t, to), o.holdings(t, o.w.Pubkey); got["PYUSD"] != 2_000_000 || left["PYUSD"] != 0 || left["SOL"] != 0 {
				t.Fatalf("the address holds %v, the wallet %v", got, left)
			}
			var state string
			var recovered int
			if err := o.db.NewRaw(`SELECT w.state, (SELECT count(*) FROM audit_log a WHERE a.action = ? AND a.target = ? AND a.details ->> 'asset' = 'USDC')
				FROM wallets w WHERE w.id = ?`, custody.ActionRecovered, wallet.Target(o.w.ID), o.w.ID).Scan(context.Background(), &state, &recovered); err != nil {
				t.Fatal(err)
			}
			if state != "frozen" || recovered != 1 {
				t.Fatalf("wallet %s, %d recovery entries", state, recovered)
			}
			if !strings.Contains(out, o.w.ID.String()) {
				t.Fatalf("output %q", out)
			}
			// Run again: nothing left to move, nothing sent.
			if _, err := o.run(t, args...); !errors.Is(err, custody.ErrNothingToRecover) {
				t.Fatalf("second run: %v", err)
			}
		})
	}
}

// `worker keys rotate` re-seals the secrets to the first master key and
// says when the others may go; the wallet then pays with the new key only.
func TestKeysRotate_ThenTheOldKeyMayGo(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 1_000_000, 1_000_000_000)
	next, _, _ := signer.GenerateMasterKey()
	o.env["WALLET_MASTER_KEY"] = next + "," + o.env["WALLET_MASTER_KEY"]
	out, err := o.run(t, "keys", "rotate")
	if err != nil || !strings.Contains(out, "1 wallet secrets") || !strings.Contains(out, "may be removed") {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	o.env["WALLET_MASTER_KEY"] = next
	to := sol.NewWallet().PublicKey().String()
	if out, err := o.run(t, "recover", "--wallet", o.w.ID.String(), "--to", to, "--operator", "ops", "--reason", "test"); err != nil {
		t.Fatalf("recover with the new key only: %v (%s)", err, out)
	}
	if got := o.usdc(t, to); got != 1_000_000 {
		t.Fatalf("received %d", got)
	}
}

// Package wallettest makes what the tests of the domain packages start
// from: a master key, a devnet account, and wallets of it created as the
// API creates them (by the system, under the default policy). Each helper
// fails the test when it cannot make what it is asked for, so a test never
// runs on with half a fixture.
package wallettest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// MasterKey is a new master key pair, as `worker keygen` makes one.
type MasterKey struct {
	// Private is the worker's half, base64 (WALLET_MASTER_KEY).
	Private string
	// Sealer seals under the public half, as the API does.
	Sealer *signer.Sealer
}

// NewMasterKey makes a master key pair.
func NewMasterKey(tb testing.TB) MasterKey {
	tb.Helper()
	priv, pub, err := signer.GenerateMasterKey()
	if err != nil {
		tb.Fatal(err)
	}
	s, err := signer.NewSealer(pub)
	if err != nil {
		tb.Fatal(err)
	}
	return MasterKey{Private: priv, Sealer: s}
}

// Keystore opens what k seals, as a worker holding k does.
func (k MasterKey) Keystore(tb testing.TB) *signer.Keystore {
	tb.Helper()
	ks, err := signer.NewKeystore(k.Private)
	if err != nil {
		tb.Fatal(err)
	}
	return ks
}

// Sealer is a sealer of a new master key whose private half no one keeps:
// for wallets nothing will sign for.
func Sealer(tb testing.TB) *signer.Sealer {
	tb.Helper()
	return NewMasterKey(tb).Sealer
}

// Account creates a devnet account on db.
func Account(tb testing.TB, db bun.IDB) auth.Account {
	tb.Helper()
	a, err := auth.CreateAccount(tb.Context(), db, solana.Devnet)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// Create makes a wallet labelled label in account acct under the default
// policy, its key made by keys.
func Create(tb testing.TB, db bun.IDB, keys signer.Maker, acct uuid.UUID, label string) wallet.Wallet {
	tb.Helper()
	w, err := wallet.Create(tb.Context(), db, keys, acct, "system", label, policy.Default(), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// New makes a devnet account and a wallet "w" of it under the default
// policy, sealed by a new master key.
func New(tb testing.TB, db bun.IDB) (auth.Account, wallet.Wallet) {
	tb.Helper()
	a := Account(tb, db)
	return a, Create(tb, db, Sealer(tb), a.ID, "w")
}

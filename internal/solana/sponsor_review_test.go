package solana_test

import (
	"context"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// lowBumpOwner grinds an owner whose USDC account's bump is at most max
// (about one key in 2^(255-max)): cheap for anyone choosing a recipient.
func lowBumpOwner(t *testing.T, max uint8) (sol.PublicKey, sol.PrivateKey) {
	t.Helper()
	for range 1 << 20 {
		k := sol.NewWallet().PrivateKey
		if _, bump, err := sol.FindAssociatedTokenAddress(k.PublicKey(), solana.DevnetUSDCMint); err == nil && bump <= max {
			return k.PublicKey(), k
		}
	}
	t.Fatal("no low-bump owner found")
	return sol.PublicKey{}, nil
}

// A sponsored transfer priced for a recipient whose USDC account exists
// must not make it when the account was closed meanwhile, or the fee
// payer pays rent its budget never counted. The compute limit alone does
// not stop it: for a recipient whose account bump is low (<= 243, one key
// in 4,096) the limit grows faster with each bump try than creating
// costs. So the sponsored transfer does not offer to make the account.
func TestIssue22SponsorKnownRecipientIsNeverCreated(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	owner, secret := newWallet(t)
	payer, psecret := newWallet(t)
	ln.SetLamports(t, owner.String(), solana.LamportsPerSOL)
	ln.SetLamports(t, payer.String(), solana.LamportsPerSOL)
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 10_000_000)
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to, _ := lowBumpOwner(t, 243)
	if exists, err := c.TokenAccountExists(ctx, to); err != nil || exists {
		t.Fatalf("recipient's account exists %v %v, want a new one", exists, err)
	}
	// Priced as if the account existed (a KnownAccounts hit), sponsored.
	tr := solana.Transfer{Owner: owner, FeePayer: payer, To: to, Amount: 1, Reference: to, RecipientAccountExists: true}
	tx, err := c.BuildTransfer(tr, bh)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := solana.Sign(context.Background(), tx, signer.Plain(secret, psecret)); err != nil {
		t.Fatal(err)
	}
	res, err := c.RPC().SimulateTransactionWithOpts(ctx, tx, &rpc.SimulateTransactionOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Err == nil {
		limit, _ := solana.TransferComputeUnits(solana.Devnet, tr)
		t.Fatalf("a transfer priced without creating the recipient's account created it within its limit (%d units, used %d): "+
			"the fee payer pays rent its budget never counted", limit, *res.Value.UnitsConsumed)
	}
}

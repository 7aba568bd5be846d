package x402

import (
	"context"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// Two separate purchases from a seller whose challenge carries the same
// extra.memo, signed within one blockhash (the service caches blockhashes
// for up to 2 s: solana.BlockhashCache), are byte-identical transactions:
// the chain runs one, yet the service holds two signed payments that a
// worker matching "the memo on the wallet's token account" (or the
// wallet's signature) attributes to the same landed transfer. Transaction
// documents the memo as what "makes the payment unique"; with a seller's
// memo nothing in the message varies.
func TestIssue23SellerMemoPaymentsAreUnique(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "1000")
	e["extra"].(map[string]any)["memo"] = "order"
	first := choose(t, w, challengeV2(e))
	second := choose(t, w, challengeV2(e))
	a, err := BuildTransaction(context.Background(), first, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildTransaction(context.Background(), second, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.OwnerSignature == b.OwnerSignature || string(a.Wire) == string(b.Wire) {
		t.Fatalf("two payments signed the same transaction (wallet signature %s, memo %q)", a.OwnerSignature, a.Memo)
	}
}

// A v1 payment (X-PAYMENT) names only scheme and network; v1 sellers
// (x402/shared findMatchingPaymentRequirements, `|| paymentRequirements[0]`)
// verify it against the FIRST entry with that scheme and network. Select
// picks the cheapest instead, so when a v1 challenge lists two exact
// entries for the wallet's network we sign a transfer (to another payTo,
// of another amount) that the seller checks against a different entry:
// an honest seller refuses it, and the reservation is held until the
// blockhash expires.
func TestIssue23V1SelectsTheEntryTheSellerVerifies(t *testing.T) {
	t.Parallel()
	w, s1, s2, f := newParty(t), newParty(t), newParty(t), newParty(t)
	pr := mustParse(t, challengeV1(v1entry(s1.pub, f.pub, "2000"), v1entry(s2.pub, f.pub, "1000")))
	c, err := pr.Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
	if err != nil {
		return // refusing an ambiguous v1 challenge is also sound
	}
	if c.Index != 0 {
		t.Fatalf("v1: chose accepts[%d] (payTo %s, %s USDC); the seller will verify the X-PAYMENT against accepts[0] (payTo %s)",
			c.Index, c.PayTo, c.Amount, s1.pub)
	}
}

package x402

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// FuzzParsePaymentRequired feeds arbitrary seller text to the parser,
// the selection and the builder: nothing panics, every failure is typed,
// no string a parsed challenge holds carries a character the rule on
// seller text refuses (policy.Deceptive), and whatever is chosen is
// payable by the rules (exact, the wallet's
// network and USDC, a positive amount within the cap, a fee payer other
// than the wallet) and builds a transaction that passes our own check.
// Run: go test -fuzz FuzzParsePaymentRequired -fuzztime 30s ./internal/x402
func FuzzParsePaymentRequired(f *testing.F) {
	seed := ed25519.NewKeyFromSeed(make([]byte, 32))
	owner := sol.PublicKeyFromBytes(seed.Public().(ed25519.PublicKey))
	s, fp := sol.PublicKeyFromBytes(make([]byte, 32)), sol.PublicKeyFromBytes(append(make([]byte, 31), 9))
	s[0] = 1
	for _, c := range []map[string]any{
		challengeV2(entry(s, fp, "1000")),
		challengeV1(v1entry(s, fp, "1000")),
		challengeV2(map[string]any{"scheme": "exact", "network": DevnetCAIP2, "amount": "0", "maxAmountRequired": "5"}),
	} {
		f.Add(mustJSON(f, c))
	}
	f.Add([]byte(`{"x402Version":2,"resource":{"url":"u"},"accepts":[{"extra":{"memo":null}}]}`))
	f.Add([]byte(`{"x402Version":1,"accepts":[{"amount":"18446744073709551615"}]}`))
	memo := entry(s, fp, "1000")
	memo["extra"].(map[string]any)["memo"] = "paid\u202e in full"
	described := challengeV2(entry(s, fp, "1000"))
	described["resource"].(map[string]any)["description"] = "line one\nline two"
	v1 := v1entry(s, fp, "1000")
	v1["resource"] = "https://seller.example/\x00"
	for _, c := range []map[string]any{challengeV2(memo), described, challengeV1(v1)} {
		f.Add(mustJSON(f, c))
	}
	maxCap := money.Quantity(5_000)
	wallet := Wallet{Network: solana.Devnet, Owner: owner}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = DecodePaymentResponseHeader(string(data))
		if _, err := DecodePaymentRequiredHeader(base64.StdEncoding.EncodeToString(data)); err != nil && !errors.Is(err, ErrInvalidChallenge) {
			t.Fatalf("untyped header error %v", err)
		}
		pr, err := ParsePaymentRequired(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidChallenge) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(pr.Accepts) == 0 || len(pr.Accepts) > maxAccepts || (pr.Version != 1 && pr.Version != 2) {
			t.Fatalf("parsed %d accepts, version %d", len(pr.Accepts), pr.Version)
		}
		texts := []string{pr.Resource.URL, pr.Resource.Description, pr.Resource.MimeType}
		for _, r := range pr.Accepts {
			texts = append(texts, r.Scheme, r.Network, r.Asset, r.PayTo, r.FeePayer, r.Memo, r.Resource.URL, r.Resource.Description, r.Resource.MimeType)
		}
		for _, text := range texts {
			if strings.ContainsFunc(text, policy.Deceptive) {
				t.Fatalf("parsed seller text %q", text)
			}
		}
		c, err := pr.Select(wallet, &maxCap)
		if err != nil {
			var np *NotPayableError
			if !errors.As(err, &np) || len(np.Rejections) != len(pr.Accepts) {
				t.Fatalf("select error %v", err)
			}
			return
		}
		r := pr.Accepts[c.Index]
		if r.Scheme != SchemeExact || r.Network != NetworkID(solana.Devnet, pr.Version) || r.Asset != solana.DevnetUSDCMint.String() ||
			c.Amount <= 0 || c.Amount > maxCap || c.FeePayer.Equals(owner) || c.PayTo.Equals(owner) || len(c.Memo) > MaxMemoBytes {
			t.Fatalf("chose an unpayable entry %+v", c)
		}
		p, err := Pay(context.Background(), c, ownerOf(seed), signer.Plain(seed), testBlockhash, BuildOptions{Nonce: "00112233445566778899aabbccddeeff"})
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		if p.Header != map[int]string{1: HeaderXPayment, 2: HeaderPaymentSignature}[pr.Version] {
			t.Fatalf("header %s", p.Header)
		}
	})
}

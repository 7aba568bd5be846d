package mpp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// pay builds and signs c's transaction for w under a fresh blockhash and
// encodes its credential.
func pay(t *testing.T, ln *localnettest.Localnet, c Choice, w party) (*Transaction, string, string) {
	t.Helper()
	bh, err := solana.NewClient(ln.URL, solana.Devnet, 0).LatestBlockhash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := BuildTransaction(context.Background(), c, w.pub, signer.Plain(w.key), bh.Hash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, value := Credential(c, tx)
	return tx, name, value
}

// selectFrom reads the seller's 402 for /weather and chooses for wallet.
func selectFrom(t *testing.T, s *mpptest.Seller, wallet Wallet) Choice {
	t.Helper()
	cs, err := ParseChallenges(s.Challenges(t, mpptest.Weather)...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Select(cs, wallet, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// landedSignatures are a confirmed transaction's signatures.
func landedSignatures(t *testing.T, ln *localnettest.Localnet, sig string) []string {
	t.Helper()
	var tx *struct {
		Meta        struct{ Err any }
		Transaction struct{ Signatures []string }
	}
	ln.Call(t, &tx, "getTransaction", sig, map[string]any{"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0})
	if tx == nil || tx.Meta.Err != nil {
		t.Fatalf("transaction %s: not landed, or failed: %+v", sig, tx)
	}
	return tx.Transaction.Signatures
}

// The official seller (mppx 0.11 and @solana/mpp 0.6, examples/mpp-seller)
// takes our payment in each of its modes: the wallet paying the fee; the
// seller paying it (the wallet holds no SOL and keeps none); splits, with
// a memo, and one whose account the transaction creates (paid by the
// seller, or by the wallet as the official client does when it pays the
// fee); the credential in Payment-Authorization when the seller asks for
// it; PYUSD under Token-2022, named by its symbol, with a description
// that travels as ISO-8859-1 octets and \u escapes. Each answers 200 with
// a receipt naming the landed transaction (the wallet's signature, or the
// seller's fee payer's beside the wallet's), each payee receives exactly
// its share, and the wallet spends exactly the price, and in SOL the fee
// and the rent of the accounts it created when it pays the fee.
func TestOfficialSeller_AcceptsOurPayments(t *testing.T) {
	t.Parallel()
	mpptest.RequireDeps(t)
	ln := localnettest.Shared(t)
	usdcToken := solana.Devnet.USDC()
	for _, tc := range []struct {
		name   string
		opts   func() mpptest.Options
		tokens []solana.Token // the wallet's; nil: USDC
		token  solana.Token   // the one paid
	}{
		{"the wallet pays the fee", func() mpptest.Options { return mpptest.Options{Price: 12_345} }, nil, usdcToken},
		{"the seller pays the fee", func() mpptest.Options {
			return mpptest.Options{Price: 10_000, FeePayer: true, ExternalID: "order-42"}
		}, nil, usdcToken},
		{"splits, the seller paying and creating one's account", func() mpptest.Options {
			return mpptest.Options{Price: 10_000, FeePayer: true, Splits: []mpptest.Split{
				{Recipient: newParty(t).pub.String(), Amount: "1500", Memo: "platform fee"},
				{Recipient: newParty(t).pub.String(), Amount: "500", ATACreationRequired: true},
			}}
		}, nil, usdcToken},
		{"a split, the wallet paying (its account exists: the wallet creates none)", func() mpptest.Options {
			return mpptest.Options{Price: 10_000, ExternalID: "inv-7", Splits: []mpptest.Split{{Recipient: newParty(t).pub.String(), Amount: "2500", Memo: "referral"}}}
		}, nil, usdcToken},
		{"the credential in Payment-Authorization", func() mpptest.Options {
			return mpptest.Options{Price: 10_000, FeePayer: true, RequiresAuth: true}
		}, nil, usdcToken},
		{"PYUSD by symbol", func() mpptest.Options {
			return mpptest.Options{Price: 4_321, FeePayer: true, Currency: "pyusd", Description: `Météo ☀ 🌦 "quoted" \ back`}
		}, []solana.Token{usdcToken, devnetPYUSD}, devnetPYUSD},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts()
			s := mpptest.Start(t, ln.URL, o)
			w := newParty(t)
			ln.SetTokenBalance(t, w.pub.String(), tc.token.Mint.String(), 1_000_000)
			if !o.FeePayer {
				ln.SetLamports(t, w.pub.String(), 1_000_000_000)
			}
			c := selectFrom(t, s, Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: tc.tokens})
			if c.Token != tc.token || uint64(c.Amount) != o.Price || c.Recipient.String() != s.Recipient ||
				o.FeePayer && c.FeePayer.String() != s.FeePayer || !o.FeePayer && !c.FeePayer.IsZero() {
				t.Fatalf("choice %+v", c)
			}
			if o.Description != "" && c.Challenge.Description != o.Description {
				t.Fatalf("description %q, want %q", c.Challenge.Description, o.Description)
			}
			tx, name, value := pay(t, ln, c, w)
			if want := map[bool]string{false: HeaderAuthorization, true: HeaderPaymentAuthorization}[o.RequiresAuth]; name != want {
				t.Fatalf("credential in %s, want %s", name, want)
			}
			a := s.Get(t, mpptest.Weather, name, value)
			if a.Status != http.StatusOK {
				t.Fatalf("seller answered %d %s: %s", a.Status, a.Problem, a.Body)
			}
			r, err := ParseReceipt(a.Header.Get(HeaderPaymentReceipt))
			if err != nil {
				t.Fatal(err)
			}
			if r.ChallengeID != c.Challenge.ID || r.Method != MethodSolana || r.ExternalID != o.ExternalID {
				t.Fatalf("receipt %+v", r)
			}
			sigs := landedSignatures(t, ln, r.Reference)
			if o.FeePayer {
				if len(sigs) != 2 || sigs[0] != r.Reference || sigs[1] != tx.OwnerSignature.String() {
					t.Fatalf("landed signatures %v; receipt %s, wallet %s", sigs, r.Reference, tx.OwnerSignature)
				}
			} else if len(sigs) != 1 || r.Signature != tx.OwnerSignature {
				t.Fatalf("landed signatures %v; receipt %s, wallet %s", sigs, r.Reference, tx.OwnerSignature)
			}
			var split uint64
			for _, sp := range o.Splits {
				n, _ := ParseAtomicAmount(sp.Amount)
				split += n
				if got := s.Balance(t, sp.Recipient); got != n {
					t.Errorf("split %s received %d, want %d", sp.Recipient, got, n)
				}
			}
			if got, want := s.Balance(t, s.Recipient), o.Price-split; got != want {
				t.Errorf("recipient received %d, want %d", got, want)
			}
			if got := s.Balance(t, w.pub.String()); got != 1_000_000-o.Price {
				t.Errorf("wallet holds %d, want %d", got, 1_000_000-o.Price)
			}
			lamports := s.Lamports(t, w.pub.String())
			if o.FeePayer && lamports != 0 {
				t.Errorf("the wallet holds %d lamports, want 0", lamports)
			}
			if want := solana.BaseFeeLamports + solana.PriorityFee(tx.ComputeUnitPrice, tx.ComputeUnitLimit); !o.FeePayer && 1_000_000_000-lamports != want {
				t.Errorf("the wallet spent %d lamports, want %d (the fee, no rent)", 1_000_000_000-lamports, want)
			}
		})
	}
}

// The official seller answers a credential sent again as paid, with the
// same receipt reference (pull mode never consults its store of used
// transactions: it re-broadcasts, and the chain runs a transaction once),
// but the recipient is paid once. Our side makes a payment's
// transactions differ (BuildTransaction's nonce), so only a replay repeats
// one.
func TestOfficialSeller_ReplayedCredentialPaysOnce(t *testing.T) {
	t.Parallel()
	mpptest.RequireDeps(t)
	ln := localnettest.Shared(t)
	s := mpptest.Start(t, ln.URL, mpptest.Options{Price: 10_000, FeePayer: true})
	w := newParty(t)
	ln.SetTokenBalance(t, w.pub.String(), solana.DevnetUSDCMint.String(), 1_000_000)
	_, name, value := pay(t, ln, selectFrom(t, s, Wallet{Network: solana.Devnet, Owner: w.pub}), w)
	first := s.Get(t, mpptest.Weather, name, value)
	again := s.Get(t, mpptest.Weather, name, value)
	if first.Status != http.StatusOK {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	r1, err1 := ParseReceipt(first.Header.Get(HeaderPaymentReceipt))
	r2, err2 := ParseReceipt(again.Header.Get(HeaderPaymentReceipt))
	if again.Status != http.StatusOK || err1 != nil || err2 != nil || r1.Reference != r2.Reference {
		t.Fatalf("replay answered %d (%v %v): %s then %s", again.Status, err1, err2, r1.Reference, r2.Reference)
	}
	if got := s.Balance(t, s.Recipient); got != 10_000 {
		t.Fatalf("the recipient holds %d after a replay, want 10000 (paid once)", got)
	}
	if got := s.Balance(t, w.pub.String()); got != 990_000 {
		t.Fatalf("the wallet holds %d, want 990000", got)
	}
}

// An expired challenge is not chosen; and a credential built while it was
// fresh but sent after it expired is refused by the official seller (402
// payment-expired), nothing paid.
func TestOfficialSeller_ExpiredChallenge(t *testing.T) {
	t.Parallel()
	mpptest.RequireDeps(t)
	ln := localnettest.Shared(t)
	s := mpptest.Start(t, ln.URL, mpptest.Options{Price: 10_000, FeePayer: true, Expires: time.Second})
	w := newParty(t)
	ln.SetTokenBalance(t, w.pub.String(), solana.DevnetUSDCMint.String(), 1_000_000)
	wallet := Wallet{Network: solana.Devnet, Owner: w.pub}
	cs, err := ParseChallenges(s.Challenges(t, mpptest.Weather)...)
	if err != nil {
		t.Fatal(err)
	}
	var np *NotPayableError
	if _, err := Select(cs, wallet, nil, time.Now().Add(2*time.Second)); !errors.As(err, &np) || !np.Has(ReasonExpired) {
		t.Fatalf("an expired challenge: %v", err)
	}
	c, err := Select(cs, wallet, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, name, value := pay(t, ln, c, w)
	time.Sleep(time.Until(c.Expires) + 50*time.Millisecond)
	if a := s.Get(t, mpptest.Weather, name, value); a.Status != http.StatusPaymentRequired || a.Problem != "payment-expired" {
		t.Fatalf("a late credential: %d %s %s", a.Status, a.Problem, a.Body)
	}
	if got := s.Balance(t, w.pub.String()); got != 1_000_000 {
		t.Fatalf("the wallet holds %d, want 1000000", got)
	}
}

// The official seller refuses what it did not ask, so the acceptance
// above is not vacuous: a transaction paying one unit more than the price
// (500 internal-payment-error: its verification failures are plain
// errors), and a credential whose echoed request names another amount
// (402 invalid-challenge: the challenge's HMAC no longer matches). Nothing
// is paid.
func TestOfficialSeller_RefusesWhatItDidNotAsk(t *testing.T) {
	t.Parallel()
	mpptest.RequireDeps(t)
	ln := localnettest.Shared(t)
	s := mpptest.Start(t, ln.URL, mpptest.Options{Price: 10_000, FeePayer: true})
	w := newParty(t)
	ln.SetTokenBalance(t, w.pub.String(), solana.DevnetUSDCMint.String(), 1_000_000)
	c := selectFrom(t, s, Wallet{Network: solana.Devnet, Owner: w.pub})

	over := c
	over.Amount++
	over.Primary++
	_, name, value := pay(t, ln, over, w)
	if a := s.Get(t, mpptest.Weather, name, value); a.Status != http.StatusInternalServerError || a.Problem != "internal-payment-error" {
		t.Fatalf("overpaying: %d %s %s", a.Status, a.Problem, a.Body)
	}

	other := c
	var req map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(c.Challenge.Request)
	json.Unmarshal(raw, &req)
	req["amount"] = "9999"
	other.Challenge.Request = encodeRequest(t, req)
	other.Amount, other.Primary = 9_999, 9_999
	_, name, value = pay(t, ln, other, w)
	if a := s.Get(t, mpptest.Weather, name, value); a.Status != http.StatusPaymentRequired || a.Problem != "invalid-challenge" {
		t.Fatalf("another amount: %d %s %s", a.Status, a.Problem, a.Body)
	}
	if got := s.Balance(t, s.Recipient); got != 0 {
		t.Fatalf("the recipient holds %d, want 0", got)
	}
	if got := s.Balance(t, w.pub.String()); got != 1_000_000 {
		t.Fatalf("the wallet holds %d, want 1000000", got)
	}
}

package mpp

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// fuzzParties are fixed keys: the wallet, a seller, a fee payer, a split.
func fuzzParties() (ed25519.PrivateKey, sol.PublicKey, sol.PublicKey, sol.PublicKey) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	key9 := func(b byte) sol.PublicKey {
		k := ed25519.NewKeyFromSeed(append(make([]byte, 31), b))
		return sol.PublicKeyFromBytes(k.Public().(ed25519.PublicKey))
	}
	return key, key9(1), key9(2), key9(3)
}

// fuzzRequests are seed charge requests of every shape.
func fuzzRequests(seller, feePayer, split sol.PublicKey) []map[string]any {
	plain := request(seller, "1000")
	withSplits := sponsored(request(seller, "10000"), feePayer)
	withSplits["externalId"] = "order-42"
	details(withSplits)["splits"] = []map[string]any{
		{"recipient": split.String(), "amount": "1500", "memo": "fee ☀"},
		{"recipient": seller.String(), "amount": "500", "ataCreationRequired": true},
	}
	symbol := request(seller, "42")
	symbol["currency"] = "usdc"
	delete(details(symbol), "tokenProgram")
	sol := request(seller, "1000")
	sol["currency"] = "sol"
	return []map[string]any{plain, sponsored(request(seller, "5000"), feePayer), withSplits, symbol, sol}
}

// payable checks what Select chose against the rules, builds it and
// reads its credential back.
func payable(t *testing.T, cs []Challenge, key ed25519.PrivateKey) {
	owner := ownerOf(key)
	maxCap := money.Quantity(50_000)
	c, err := Select(cs, Wallet{Network: solana.Devnet, Owner: owner}, &maxCap, testNow)
	if err != nil {
		var np *NotPayableError
		if !errors.As(err, &np) || len(np.Rejections) != len(cs) {
			t.Fatalf("select error %v", err)
		}
		return
	}
	ch := c.Charge
	if c.Challenge.Method != MethodSolana || c.Challenge.Intent != IntentCharge || ch.Network != NetworkDevnet ||
		resolveMint(ch.Currency, ch.Network) != solana.DevnetUSDCMint.String() || c.Amount <= 0 || c.Amount > maxCap ||
		c.Primary <= 0 || c.FeePayer.Equals(owner) || !c.Expires.After(testNow) {
		t.Fatalf("chose an unpayable challenge %+v", c)
	}
	for _, r := range c.Recipients() {
		if r.Equals(owner) {
			t.Fatalf("chose a payment to the wallet %+v", c)
		}
	}
	tx, err := BuildTransaction(context.Background(), c, owner, signer.Plain(key), testBlockhash, BuildOptions{Nonce: nonce(5)})
	if err != nil {
		if errors.Is(err, ErrShape) && strings.Contains(err.Error(), "bytes (at most 1232)") {
			return // more splits and memos than a packet holds
		}
		t.Fatalf("build: %v", err)
	}
	name, value := Credential(c, tx)
	p, err := ParseCredential(value)
	if err != nil || p.Challenge != c.Challenge || p.Transaction != tx.Base64 || (name != HeaderAuthorization && name != c.Challenge.Header) {
		t.Fatalf("credential %s %+v %v", name, p, err)
	}
}

// FuzzParseChallenges feeds arbitrary WWW-Authenticate values to the
// parser, the selection and the builder: nothing panics, every failure is
// typed, every parsed parameter is UTF-8 free of the characters the rule
// on seller text refuses, what mppx's serializer writes of the parsed
// challenges reads back the same, and whatever is chosen is payable by the
// rules and builds a transaction that passes our own check, whose
// credential reads back.
// Run: go test -fuzz FuzzParseChallenges -fuzztime 30s ./internal/mpp
func FuzzParseChallenges(f *testing.F) {
	key, seller, feePayer, split := fuzzParties()
	f.Add(officialHeader)
	for _, r := range fuzzRequests(seller, feePayer, split) {
		c := challengeOf(f, r)
		f.Add(headerOf(c))
		c.Description = "Météo ☀ \"x\" \\ 🌦"
		c.Header = HeaderPaymentAuthorization
		f.Add(`Bearer realm="api", ` + headerOf(c) + `, Basic realm="x"`)
	}
	f.Add(`Payment id=a, realm=r, method=solana, intent=charge, request=e30, expires=2026-11-28T05:17:43Z`)
	f.Add(`Payment id="a", ID="b"`)
	f.Add(`Payment description="\ud83c\udf26 \u2600 \xe9"`)
	f.Add(`Negotiate YIIB+w==, Payment realm="x\"y,z"`)
	f.Fuzz(func(t *testing.T, value string) {
		cs, err := ParseChallenges(value)
		if err != nil {
			if !errors.Is(err, ErrInvalidChallenge) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(cs) > MaxChallenges {
			t.Fatalf("%d challenges", len(cs))
		}
		for _, c := range cs {
			for _, v := range []string{c.ID, c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Description, c.Digest, c.Opaque, c.Header} {
				if !utf8.ValidString(v) || strings.ContainsFunc(v, policy.Deceptive) {
					t.Fatalf("parsed %q", v)
				}
			}
			if c.ID == "" || !methodRe.MatchString(c.Method) || c.Intent == "" || len(c.Request) > MaxRequestBytes {
				t.Fatalf("parsed %+v", c)
			}
		}
		if len(cs) > 0 {
			again, err := ParseChallenges(headerOf(cs...))
			if err != nil || !reflect.DeepEqual(again, cs) {
				t.Fatalf("mppx's writing of %+v reads back %+v, %v", cs, again, err)
			}
		}
		payable(t, cs, key)
	})
}

// FuzzCharge feeds arbitrary request bytes to the charge's decoder, the
// selection and the builder: nothing panics, every failure is typed, and
// a decoded charge keeps the rules (a positive amount above the splits'
// sum, at most 8 splits each positive, memos within 566 bytes and free of
// the characters the rule on seller text refuses, a fee payer key when
// the seller pays).
// Run: go test -fuzz FuzzCharge -fuzztime 30s ./internal/mpp
func FuzzCharge(f *testing.F) {
	key, seller, feePayer, split := fuzzParties()
	for _, r := range fuzzRequests(seller, feePayer, split) {
		f.Add(mustJSON(f, r))
	}
	f.Add([]byte(`{"amount":"1","currency":"USDC","recipient":"x","methodDetails":{"splits":[{"amount":"0"}]}}`))
	f.Add([]byte(`{"amount":"18446744073709551615","methodDetails":{"decimals":1e3,"feePayer":true}}`))
	f.Add([]byte("{\"externalId\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Challenge{ID: "id", Realm: "seller.example", Method: MethodSolana, Intent: IntentCharge,
			Request: base64.RawURLEncoding.EncodeToString(data), Expires: testExpires}
		ch, err := c.Charge()
		if err != nil {
			if !errors.Is(err, ErrInvalidChallenge) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		var sum uint64
		memos := []string{ch.ExternalID, ch.Currency, ch.Network}
		for _, s := range ch.Splits {
			if s.Amount == 0 || s.Recipient.IsZero() {
				t.Fatalf("split %+v", s)
			}
			sum += s.Amount
			memos = append(memos, s.Memo)
		}
		if ch.Amount == 0 || sum >= ch.Amount || ch.Primary() != ch.Amount-sum || len(ch.Splits) > MaxSplits || ch.Recipient.IsZero() ||
			ch.FeePayer && ch.FeePayerKey.IsZero() || ch.Decimals != nil && (*ch.Decimals < 0 || *ch.Decimals > 255) {
			t.Fatalf("decoded %+v", ch)
		}
		for _, m := range memos {
			if len(m) > MaxMemoBytes && m != ch.Currency || !utf8.ValidString(m) || strings.ContainsFunc(m, policy.Deceptive) {
				t.Fatalf("decoded text %q", m)
			}
		}
		payable(t, []Challenge{c}, key)
	})
}

package x402

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// devnetPYUSD is devnet PYUSD (Token-2022), which the localnet carries
// with mainnet PYUSD's extensions.
var devnetPYUSD = solana.Token{Symbol: "PYUSD", Mint: sol.MustPublicKeyFromBase58("CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"), Program: sol.Token2022ProgramID, Decimals: 6}

// party is a key pair of a test: the wallet, a seller, a fee payer.
type party struct {
	key ed25519.PrivateKey
	pub sol.PublicKey
}

func newParty(t testing.TB) party {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return party{key: key, pub: sol.PublicKeyFromBytes(pub)}
}

// entry is a v2 `accepts` entry paying amount of devnet USDC to payTo.
func entry(payTo, feePayer sol.PublicKey, amount string) map[string]any {
	return map[string]any{
		"scheme": "exact", "network": DevnetCAIP2, "amount": amount,
		"asset": solana.DevnetUSDCMint.String(), "payTo": payTo.String(),
		"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": feePayer.String()},
	}
}

// v1entry is the v1 form of entry.
func v1entry(payTo, feePayer sol.PublicKey, amount string) map[string]any {
	return map[string]any{
		"scheme": "exact", "network": DevnetV1, "maxAmountRequired": amount,
		"resource": "https://seller.example/v1/data", "description": "v1 data", "mimeType": "application/json",
		"asset": solana.DevnetUSDCMint.String(), "payTo": payTo.String(),
		"maxTimeoutSeconds": 60, "extra": map[string]any{"feePayer": feePayer.String()},
	}
}

func challengeV2(accepts ...map[string]any) map[string]any {
	return map[string]any{
		"x402Version": 2, "error": "PAYMENT-SIGNATURE header is required",
		"resource": map[string]any{"url": "https://seller.example/data", "description": "premium data", "mimeType": "application/json"},
		"accepts":  accepts,
	}
}

func challengeV1(accepts ...map[string]any) map[string]any {
	return map[string]any{"x402Version": 1, "error": "X-PAYMENT header is required", "accepts": accepts}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, v any) *PaymentRequired {
	t.Helper()
	pr, err := ParsePaymentRequired(mustJSON(t, v))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return pr
}

func TestParsePaymentRequired(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	_ = w
	good := string(mustJSON(t, challengeV2(entry(s.pub, f.pub, "1000"))))
	many := make([]map[string]any, maxAccepts+1)
	for i := range many {
		many[i] = entry(s.pub, f.pub, "1")
	}
	cases := []struct {
		name, json string
		ok         bool
		want       string // in the error
	}{
		{"v2", good, true, ""},
		{"v1", string(mustJSON(t, challengeV1(v1entry(s.pub, f.pub, "1000")))), true, ""},
		{"an EVM entry does not fail the parse", string(mustJSON(t, challengeV2(map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "10000", "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USDC", "version": "2"}}))), true, ""},
		{"not JSON", `{"x402Version":2,`, false, "not a JSON object"},
		{"an array", `[1,2]`, false, "not a JSON object"},
		{"version 3", strings.Replace(good, `"x402Version":2`, `"x402Version":3`, 1), false, "x402Version"},
		{"version as a string", strings.Replace(good, `"x402Version":2`, `"x402Version":"2"`, 1), false, "x402Version"},
		{"version 2.0", strings.Replace(good, `"x402Version":2`, `"x402Version":2.0`, 1), false, "x402Version"},
		{"no version", `{"accepts":[{}]}`, false, "x402Version"},
		{"no accepts", `{"x402Version":1}`, false, "accepts"},
		{"empty accepts", `{"x402Version":1,"accepts":[]}`, false, "accepts"},
		{"accepts not an array", `{"x402Version":1,"accepts":{}}`, false, "not a JSON object"},
		{"an entry not an object", `{"x402Version":1,"accepts":["exact"]}`, false, "accepts[0]"},
		{"too many entries", string(mustJSON(t, challengeV2(many...))), false, "more than"},
		{"v2 without resource", `{"x402Version":2,"accepts":[{}]}`, false, "resource"},
		{"v2 resource without url", `{"x402Version":2,"resource":{"description":"x"},"accepts":[{}]}`, false, "url"},
		{"v2 extensions not an object", strings.Replace(good, `"x402Version":2`, `"extensions":[1],"x402Version":2`, 1), false, "extensions"},
		{"not UTF-8", "{\"x402Version\":1,\"error\":\"\xff\",\"accepts\":[{}]}", false, "UTF-8"},
		{"too large", `{"x402Version":1,"error":"` + strings.Repeat("a", MaxChallengeBytes) + `","accepts":[{}]}`, false, "larger"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := ParsePaymentRequired([]byte(tc.json))
			if tc.ok {
				if err != nil || pr == nil || len(pr.Accepts) == 0 {
					t.Fatalf("err %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidChallenge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInvalidChallenge with %q", err, tc.want)
			}
		})
	}
}

func TestParsePaymentRequired_ReadsFields(t *testing.T) {
	t.Parallel()
	s, f := newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "2500")
	e["extra"].(map[string]any)["memo"] = "inv_42"
	pr := mustParse(t, challengeV2(e))
	r := pr.Accepts[0]
	if pr.Version != 2 || pr.Resource.URL != "https://seller.example/data" || pr.Resource.Description != "premium data" ||
		r.Scheme != "exact" || r.Network != DevnetCAIP2 || r.AmountText != "2500" || r.PayTo != s.pub.String() ||
		r.FeePayer != f.pub.String() || r.Memo != "inv_42" || r.MaxTimeoutSeconds != 60 || r.malformed != "" {
		t.Fatalf("parsed %+v %+v", pr, r)
	}
	pr1 := mustParse(t, challengeV1(v1entry(s.pub, f.pub, "7")))
	r1 := pr1.Accepts[0]
	if pr1.Version != 1 || r1.AmountText != "7" || r1.Resource.URL != "https://seller.example/v1/data" || r1.Resource.Description != "v1 data" {
		t.Fatalf("parsed v1 %+v", r1)
	}
}

// amount ?? maxAmountRequired: presence decides, not truthiness; both
// present must agree.
func TestParsePaymentRequired_AmountIsNullishNotFalsy(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	cases := []struct {
		name        string
		amount, max any // nil: absent
		text        string
		reason      Reason // of Select; "" = payable
	}{
		{"amount only", "1000", nil, "1000", ""},
		{"maxAmountRequired only", nil, "1000", "1000", ""},
		{"null amount falls back", json.RawMessage("null"), "1000", "1000", ""},
		{"both agree", "1000", "1000", "1000", ""},
		{"zero amount wins and is refused", "0", nil, "0", ReasonAmount},
		{"zero amount does not fall through to a larger maxAmountRequired", "0", "1000", "", ReasonMalformed},
		{"disagreeing amounts", "1000", "2000", "", ReasonMalformed},
		{"empty amount does not fall through", "", "1000", "", ReasonMalformed},
		{"amount as a number", 1000, nil, "", ReasonMalformed},
		{"neither", nil, nil, "", ReasonAmount},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := entry(s.pub, f.pub, "")
			delete(e, "amount")
			if tc.amount != nil {
				e["amount"] = tc.amount
			}
			if tc.max != nil {
				e["maxAmountRequired"] = tc.max
			}
			pr := mustParse(t, challengeV2(e))
			if got := pr.Accepts[0].AmountText; got != tc.text {
				t.Fatalf("AmountText %q, want %q", got, tc.text)
			}
			c, err := pr.Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
			if tc.reason == "" {
				if err != nil || c.Amount != 1000 {
					t.Fatalf("select %v %v", c.Amount, err)
				}
				return
			}
			var np *NotPayableError
			if !errors.As(err, &np) || !np.Has(tc.reason) {
				t.Fatalf("err %v, want reason %s", err, tc.reason)
			}
		})
	}
}

func TestParseAtomicAmount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1", 1, true}, {"0", 0, true}, {"1000000", 1_000_000, true},
		{"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false}, {"100000000000000000000", 0, false},
		{"", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1e3", 0, false}, {"1.0", 0, false},
		{"01", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"0x10", 0, false}, {"١", 0, false},
	} {
		got, err := ParseAtomicAmount(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAtomicAmount(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func TestDecodePaymentRequiredHeader(t *testing.T) {
	t.Parallel()
	s, f := newParty(t), newParty(t)
	raw := mustJSON(t, challengeV2(entry(s.pub, f.pub, "1000")))
	padded := base64.StdEncoding.EncodeToString(raw)
	for name, v := range map[string]string{
		"padded": padded, "unpadded": base64.RawStdEncoding.EncodeToString(raw), "spaces around": " " + padded + "\t",
	} {
		pr, err := DecodePaymentRequiredHeader(v)
		if err != nil || pr.Version != 2 || pr.Accepts[0].AmountText != "1000" {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, v := range map[string]string{
		"empty":       "",
		"not base64":  "{" + padded,
		"v1 body":     base64.StdEncoding.EncodeToString(mustJSON(t, challengeV1(v1entry(s.pub, f.pub, "1")))),
		"too long":    strings.Repeat("A", maxChallengeHeaderBytes+4),
		"url-safe":    strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"a":"` + strings.Repeat("\xfb\xff", 30) + `"}`))),
		"not UTF-8":   base64.StdEncoding.EncodeToString([]byte("{\"x402Version\":2,\"e\":\"\xff\"}")),
		"JSON string": base64.StdEncoding.EncodeToString([]byte(`"x"`)),
	} {
		if _, err := DecodePaymentRequiredHeader(v); !errors.Is(err, ErrInvalidChallenge) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	wallet := Wallet{Network: solana.Devnet, Owner: w.pub}
	max := func(m money.Quantity) *money.Quantity { return &m }
	with := func(e map[string]any, k string, v any) map[string]any {
		if v == nil {
			delete(e, k)
		} else {
			e[k] = v
		}
		return e
	}
	extra := func(e map[string]any, k string, v any) map[string]any {
		x := e["extra"].(map[string]any)
		if v == nil {
			delete(x, k)
		} else {
			x[k] = v
		}
		return e
	}
	ok := func() map[string]any { return entry(s.pub, f.pub, "1000") }
	ata := func(o sol.PublicKey) sol.PublicKey {
		a, _, _ := sol.FindAssociatedTokenAddress(o, solana.DevnetUSDCMint)
		return a
	}
	cases := []struct {
		name      string
		challenge map[string]any
		wallet    Wallet
		max       *money.Quantity
		reason    Reason // "" = payable
		amount    money.Quantity
		index     int
	}{
		{"payable", challengeV2(ok()), wallet, nil, "", 1000, 0},
		{"at the cap", challengeV2(ok()), wallet, max(1000), "", 1000, 0},
		{"over the cap", challengeV2(ok()), wallet, max(999), ReasonOverMax, 0, 0},
		{"zero cap", challengeV2(ok()), wallet, max(0), ReasonOverMax, 0, 0},
		{"v1 names", challengeV1(v1entry(s.pub, f.pub, "1000")), wallet, nil, "", 1000, 0},
		{"v1 with a CAIP-2 id", challengeV1(with(v1entry(s.pub, f.pub, "1000"), "network", DevnetCAIP2)), wallet, nil, ReasonNetwork, 0, 0},
		{"v2 with a v1 name", challengeV2(with(ok(), "network", DevnetV1)), wallet, nil, ReasonNetwork, 0, 0},
		{"mainnet wallet, devnet challenge", challengeV2(ok()), Wallet{Network: solana.Mainnet, Owner: w.pub}, nil, ReasonNetwork, 0, 0},
		{"mainnet", challengeV2(with(with(ok(), "network", MainnetCAIP2), "asset", solana.MainnetUSDCMint.String())), Wallet{Network: solana.Mainnet, Owner: w.pub}, nil, "", 1000, 0},
		{"mainnet mint on devnet", challengeV2(with(ok(), "asset", solana.MainnetUSDCMint.String())), wallet, nil, ReasonAsset, 0, 0},
		{"another token", challengeV2(with(ok(), "asset", sol.SolMint.String())), wallet, nil, ReasonAsset, 0, 0},
		{"another scheme", challengeV2(with(ok(), "scheme", "upto")), wallet, nil, ReasonScheme, 0, 0},
		{"an EVM network", challengeV2(with(ok(), "network", "eip155:8453")), wallet, nil, ReasonNetwork, 0, 0},
		{"no payTo", challengeV2(with(ok(), "payTo", nil)), wallet, nil, ReasonPayTo, 0, 0},
		{"payTo not base58", challengeV2(with(ok(), "payTo", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C")), wallet, nil, ReasonPayTo, 0, 0},
		{"payTo too short", challengeV2(with(ok(), "payTo", "1111")), wallet, nil, ReasonPayTo, 0, 0},
		{"payTo is the wallet", challengeV2(with(ok(), "payTo", w.pub.String())), wallet, nil, ReasonPayToIsWallet, 0, 0},
		{"no fee payer", challengeV2(extra(ok(), "feePayer", nil)), wallet, nil, ReasonFeePayerMissing, 0, 0},
		{"no extra", challengeV2(with(ok(), "extra", nil)), wallet, nil, ReasonFeePayerMissing, 0, 0},
		{"fee payer not an address", challengeV2(extra(ok(), "feePayer", "seller")), wallet, nil, ReasonFeePayerInvalid, 0, 0},
		{"fee payer is the wallet", challengeV2(extra(ok(), "feePayer", w.pub.String())), wallet, nil, ReasonFeePayerIsWallet, 0, 0},
		{"fee payer is the mint", challengeV2(extra(ok(), "feePayer", solana.DevnetUSDCMint.String())), wallet, nil, ReasonFeePayerInvalid, 0, 0},
		{"fee payer is the wallet's token account", challengeV2(extra(ok(), "feePayer", ata(w.pub).String())), wallet, nil, ReasonFeePayerInvalid, 0, 0},
		{"fee payer is the memo program", challengeV2(extra(ok(), "feePayer", sol.MemoProgramID.String())), wallet, nil, ReasonFeePayerInvalid, 0, 0},
		{"fee payer not a string", challengeV2(extra(ok(), "feePayer", 7)), wallet, nil, ReasonMalformed, 0, 0},
		{"memo at 256 bytes", challengeV2(extra(ok(), "memo", strings.Repeat("m", 256))), wallet, nil, "", 1000, 0},
		{"memo over 256 bytes", challengeV2(extra(ok(), "memo", strings.Repeat("m", 257))), wallet, nil, ReasonMemo, 0, 0},
		{"amount with decimals", challengeV2(with(ok(), "amount", "0.01")), wallet, nil, ReasonAmount, 0, 0},
		{"amount over uint64", challengeV2(with(ok(), "amount", "18446744073709551616")), wallet, nil, ReasonAmount, 0, 0},
		{"amount over the service's range", challengeV2(with(ok(), "amount", "18446744073709551615")), wallet, nil, ReasonAmount, 0, 0},
		{"the cheapest payable entry", challengeV2(with(ok(), "scheme", "upto"), entry(s.pub, f.pub, "3000"), entry(s.pub, f.pub, "2000"), entry(s.pub, f.pub, "2000")), wallet, nil, "", 2000, 2},
		{"cap checked on the chosen entry, not accepts[0]", challengeV2(entry(s.pub, f.pub, "5000"), entry(s.pub, f.pub, "500")), wallet, max(1000), "", 500, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := mustParse(t, tc.challenge)
			c, err := pr.Select(tc.wallet, (*money.Quantity)(tc.max))
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Amount != tc.amount || c.Index != tc.index || !c.PayTo.Equals(s.pub) || !c.FeePayer.Equals(f.pub) ||
					!c.Asset.Equals(tc.wallet.Network.USDCMint()) || c.Resource.URL == "" {
					t.Fatalf("choice %+v", c)
				}
				return
			}
			var np *NotPayableError
			if !errors.As(err, &np) || !np.Has(tc.reason) || len(np.Rejections) != len(pr.Accepts) {
				t.Fatalf("err %v, want reason %s", err, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "no payable x402 requirement; accepts[0]: ") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

// A v1 payment (X-PAYMENT) names only scheme and network; v1 sellers
// (x402/shared findMatchingPaymentRequirements, `|| paymentRequirements[0]`)
// verify it against the FIRST entry with that scheme and network. So when a
// v1 challenge lists two exact entries for the wallet's network, Select
// takes the first (or refuses the challenge), not the cheapest: a transfer
// to another payTo, of another amount, would be checked against a different
// entry and refused by an honest seller, its reservation held until the
// blockhash expires.
func TestSelect_V1TakesTheEntryTheSellerVerifies(t *testing.T) {
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

// A wallet that pays in several tokens pays a requirement in any of them:
// the choice carries the token, the wallet's most preferred token wins
// over a cheaper entry in another (amounts of different tokens are not
// compared), the cheapest entry wins within a token, and an asset outside
// the wallet's tokens is refused naming them. A wallet given no tokens
// pays in USDC only, as before.
func TestSelect_PaysInTheWalletsTokens(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	usdcToken := solana.Devnet.USDC()
	usdg := solana.Token{Symbol: "USDG", Mint: sol.MustPublicKeyFromBase58("4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7"), Program: sol.Token2022ProgramID, Decimals: 6}
	in := func(tk solana.Token, amount string) map[string]any {
		e := entry(s.pub, f.pub, amount)
		e["asset"] = tk.Mint.String()
		return e
	}
	both := Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{usdcToken, devnetPYUSD}}
	pyusdFirst := Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{devnetPYUSD, usdcToken}}
	usdcOnly := Wallet{Network: solana.Devnet, Owner: w.pub}
	for _, tc := range []struct {
		name   string
		accept []map[string]any
		wallet Wallet
		token  solana.Token
		amount money.Quantity
	}{
		{"PYUSD only", []map[string]any{in(devnetPYUSD, "700")}, both, devnetPYUSD, 700},
		{"the preferred token over a cheaper one", []map[string]any{in(devnetPYUSD, "500"), in(usdcToken, "900")}, both, usdcToken, 900},
		{"the other preference", []map[string]any{in(usdcToken, "900"), in(devnetPYUSD, "500")}, pyusdFirst, devnetPYUSD, 500},
		{"the cheapest of the token", []map[string]any{in(devnetPYUSD, "800"), in(usdg, "1"), in(devnetPYUSD, "600")}, both, devnetPYUSD, 600},
	} {
		c, err := mustParse(t, challengeV2(tc.accept...)).Select(tc.wallet, nil)
		if err != nil || c.Token != tc.token || !c.Asset.Equals(tc.token.Mint) || c.Amount != tc.amount {
			t.Fatalf("%s: choice %+v %v", tc.name, c, err)
		}
	}
	var np *NotPayableError
	_, err := mustParse(t, challengeV2(in(usdg, "1"))).Select(both, nil)
	if !errors.As(err, &np) || !np.Has(ReasonAsset) || !strings.Contains(err.Error(), "is not devnet USDC (4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU) or PYUSD (CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM)") {
		t.Fatalf("USDG for a USDC and PYUSD wallet: %v", err)
	}
	if _, err := mustParse(t, challengeV2(in(devnetPYUSD, "1"))).Select(usdcOnly, nil); !errors.As(err, &np) || !np.Has(ReasonAsset) {
		t.Fatalf("PYUSD for a wallet of no tokens: %v", err)
	}
	limit := money.Quantity(400)
	if _, err := mustParse(t, challengeV2(in(devnetPYUSD, "500"))).Select(both, &limit); !errors.As(err, &np) || !np.Has(ReasonOverMax) ||
		!strings.Contains(err.Error(), "amount 0.0005 PYUSD is over the cap of 0.0004 PYUSD") {
		t.Fatalf("over the cap: %v", err)
	}
	// The fee payer may not be the wallet's PYUSD account (Token-2022's
	// derivation, not SPL Token's).
	ata, _, _ := sol.FindAssociatedTokenAddressWithProgram(w.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	e := in(devnetPYUSD, "1")
	e["extra"] = map[string]any{"feePayer": ata.String()}
	if _, err := mustParse(t, challengeV2(e)).Select(both, nil); !errors.As(err, &np) || !np.Has(ReasonFeePayerInvalid) {
		t.Fatalf("fee payer is the wallet's PYUSD account: %v", err)
	}
}

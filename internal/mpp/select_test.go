package mpp

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// choose selects the payable challenge for r for w on devnet.
func choose(t testing.TB, w party, r map[string]any) Choice {
	t.Helper()
	c, err := Select([]Challenge{challengeOf(t, r)}, Wallet{Network: solana.Devnet, Owner: w.pub}, nil, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSelect(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	wallet := Wallet{Network: solana.Devnet, Owner: w.pub}
	mainnet := Wallet{Network: solana.Mainnet, Owner: w.pub}
	usdg := solana.Token{Symbol: "USDG", Mint: sol.MustPublicKeyFromBase58("4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7"), Program: sol.Token2022ProgramID, Decimals: 6}
	other2022 := solana.Token{Symbol: "EURX", Mint: newParty(t).pub, Program: sol.Token2022ProgramID, Decimals: 6}
	nineDecimals := solana.Token{Symbol: "NINE", Mint: newParty(t).pub, Program: sol.TokenProgramID, Decimals: 9}
	max := func(m money.Quantity) *money.Quantity { return &m }
	ok := func() map[string]any { return sponsored(request(s.pub, "1000"), f.pub) }
	with := func(k string, v any) map[string]any {
		r := ok()
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
		return r
	}
	detail := func(r map[string]any, k string, v any) map[string]any {
		if v == nil {
			delete(details(r), k)
		} else {
			details(r)[k] = v
		}
		return r
	}
	in := func(tk solana.Token, amount string) map[string]any {
		r := sponsored(request(s.pub, amount), f.pub)
		r["currency"] = tk.Mint.String()
		details(r)["tokenProgram"] = tk.Program.String()
		return r
	}
	ata := func(o sol.PublicKey) sol.PublicKey {
		a, _, _ := sol.FindAssociatedTokenAddress(o, solana.DevnetUSDCMint)
		return a
	}
	onMainnet := func(r map[string]any) map[string]any {
		r["currency"] = solana.MainnetUSDCMint.String()
		details(r)["network"] = "mainnet-beta"
		return r
	}
	split := func(r map[string]any, recipient sol.PublicKey) map[string]any {
		details(r)["splits"] = []map[string]any{{"recipient": recipient.String(), "amount": "100"}}
		return r
	}
	cases := []struct {
		name   string
		reqs   []map[string]any
		wallet Wallet
		max    *money.Quantity
		now    time.Time
		reason Reason // "" = payable
		amount money.Quantity
		index  int
	}{
		{"payable", []map[string]any{ok()}, wallet, nil, testNow, "", 1000, 0},
		{"the buyer paying the fee", []map[string]any{detail(ok(), "feePayer", nil)}, wallet, nil, testNow, "", 1000, 0},
		{"at the cap", []map[string]any{ok()}, wallet, max(1000), testNow, "", 1000, 0},
		{"over the cap", []map[string]any{ok()}, wallet, max(999), testNow, ReasonAmountOverMax, 0, 0},
		{"zero cap", []map[string]any{ok()}, wallet, max(0), testNow, ReasonAmountOverMax, 0, 0},
		{"the symbol in any case", []map[string]any{with("currency", "usdc")}, wallet, nil, testNow, "", 1000, 0},
		{"no tokenProgram: the default for USDC", []map[string]any{detail(ok(), "tokenProgram", nil)}, wallet, nil, testNow, "", 1000, 0},
		{"no decimals", []map[string]any{detail(ok(), "decimals", nil)}, wallet, nil, testNow, "", 1000, 0},
		{"mainnet", []map[string]any{onMainnet(ok())}, mainnet, nil, testNow, "", 1000, 0},
		{"the fee payer is the recipient", []map[string]any{sponsored(request(s.pub, "1000"), s.pub)}, wallet, nil, testNow, "", 1000, 0},
		{"mainnet wallet, devnet challenge", []map[string]any{ok()}, mainnet, nil, testNow, ReasonNetworkMismatch, 0, 0},
		{"devnet wallet, mainnet challenge", []map[string]any{onMainnet(ok())}, wallet, nil, testNow, ReasonNetworkMismatch, 0, 0},
		{"localnet", []map[string]any{detail(ok(), "network", "localnet")}, wallet, nil, testNow, ReasonNetworkMismatch, 0, 0},
		{"no network", []map[string]any{detail(ok(), "network", nil)}, wallet, nil, testNow, ReasonNetworkMismatch, 0, 0},
		{"a CAIP-2 network", []map[string]any{detail(ok(), "network", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")}, wallet, nil, testNow, ReasonNetworkMismatch, 0, 0},
		{"expired", []map[string]any{ok()}, wallet, nil, testNow.Add(6 * time.Minute), ReasonExpired, 0, 0},
		{"SOL", []map[string]any{with("currency", "sol")}, wallet, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"USDT on devnet is mainnet's", []map[string]any{with("currency", "USDT")}, wallet, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"mainnet USDC on devnet", []map[string]any{with("currency", solana.MainnetUSDCMint.String())}, wallet, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"USDC under Token-2022", []map[string]any{detail(ok(), "tokenProgram", sol.Token2022ProgramID.String())}, wallet, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"USDC of 9 decimals", []map[string]any{detail(ok(), "decimals", 9)}, wallet, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"a Token-2022 mint the seller verifies under SPL Token", []map[string]any{detail(in(other2022, "1000"), "tokenProgram", nil)},
			Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{other2022}}, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"a Token-2022 mint named so", []map[string]any{in(other2022, "1000")},
			Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{other2022}}, nil, testNow, "", 1000, 0},
		{"USDG without tokenProgram: the table's Token-2022", []map[string]any{detail(in(usdg, "1000"), "tokenProgram", nil)},
			Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{usdg}}, nil, testNow, "", 1000, 0},
		{"a wallet token of 9 decimals", []map[string]any{detail(in(nineDecimals, "1000"), "decimals", 9)},
			Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{nineDecimals}}, nil, testNow, ReasonAssetNotPayable, 0, 0},
		{"the fee payer is the wallet", []map[string]any{sponsored(request(s.pub, "1000"), w.pub)}, wallet, nil, testNow, ReasonFeePayerIsWallet, 0, 0},
		{"the fee payer is the mint", []map[string]any{sponsored(request(s.pub, "1000"), solana.DevnetUSDCMint)}, wallet, nil, testNow, ReasonFeePayerInvalid, 0, 0},
		{"the fee payer is the wallet's token account", []map[string]any{sponsored(request(s.pub, "1000"), ata(w.pub))}, wallet, nil, testNow, ReasonFeePayerInvalid, 0, 0},
		{"the fee payer is the recipient's token account", []map[string]any{sponsored(request(s.pub, "1000"), ata(s.pub))}, wallet, nil, testNow, ReasonFeePayerInvalid, 0, 0},
		{"the fee payer is the memo program", []map[string]any{sponsored(request(s.pub, "1000"), sol.MemoProgramID)}, wallet, nil, testNow, ReasonFeePayerInvalid, 0, 0},
		{"the recipient is the wallet", []map[string]any{sponsored(request(w.pub, "1000"), f.pub)}, wallet, nil, testNow, ReasonRecipientIsWallet, 0, 0},
		{"a split to the wallet", []map[string]any{split(ok(), w.pub)}, wallet, nil, testNow, ReasonRecipientIsWallet, 0, 0},
		{"an amount over the service's range", []map[string]any{with("amount", "18446744073709551615")}, wallet, nil, testNow, ReasonInvalid, 0, 0},
		{"an invalid request", []map[string]any{with("amount", "1.5")}, wallet, nil, testNow, ReasonInvalid, 0, 0},
		{"the cheapest", []map[string]any{in(wallet.Network.USDC(), "3000"), ok(), in(wallet.Network.USDC(), "2000"), in(wallet.Network.USDC(), "2000")}, wallet, nil, testNow, "", 1000, 1},
		{"the first on a tie", []map[string]any{with("amount", "2000"), in(wallet.Network.USDC(), "2000")}, wallet, nil, testNow, "", 2000, 0},
		{"the cap applies to the chosen one", []map[string]any{with("amount", "5000"), with("amount", "500")}, wallet, max(1000), testNow, "", 500, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := make([]Challenge, len(tc.reqs))
			for i, r := range tc.reqs {
				cs[i] = challengeOf(t, r)
			}
			c, err := Select(cs, tc.wallet, (*money.Quantity)(tc.max), tc.now)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Amount != tc.amount || c.Index != tc.index || c.Challenge != cs[tc.index] || c.Network != tc.wallet.Network || !c.selected {
					t.Fatalf("choice %+v", c)
				}
				return
			}
			var np *NotPayableError
			if !errors.As(err, &np) || !np.Has(tc.reason) || len(np.Rejections) != len(cs) {
				t.Fatalf("err %v, want reason %s", err, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "no payable MPP challenge; challenge[0]: ") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

// Challenges of other methods and intents are refused by name; the error
// of an answer without any is said so.
func TestSelect_UnsupportedMethodsAndNoChallenge(t *testing.T) {
	t.Parallel()
	w, s := newParty(t), newParty(t)
	tempo := challengeOf(t, request(s.pub, "1000"))
	tempo.Method = "tempo"
	session := challengeOf(t, request(s.pub, "1000"))
	session.Intent = "session"
	_, err := Select([]Challenge{tempo, session}, Wallet{Network: solana.Devnet, Owner: w.pub}, nil, testNow)
	var np *NotPayableError
	if !errors.As(err, &np) || len(np.Rejections) != 2 || np.Rejections[0].Reason != ReasonUnsupportedMethod || np.Rejections[1].Reason != ReasonUnsupportedMethod ||
		!strings.Contains(err.Error(), `method "tempo" intent "charge" is not solana charge`) {
		t.Fatalf("err %v", err)
	}
	_, err = Select(nil, Wallet{Network: solana.Devnet, Owner: w.pub}, nil, testNow)
	if !errors.As(err, &np) || err.Error() != "no payable MPP challenge: the answer carries no Payment challenge" {
		t.Fatalf("no challenge: %v", err)
	}
}

// A challenge without expires is not payable (the official server refuses
// a credential without it); one expiring exactly now is expired.
func TestSelect_Expiry(t *testing.T) {
	t.Parallel()
	w, s := newParty(t), newParty(t)
	wallet := Wallet{Network: solana.Devnet, Owner: w.pub}
	c := challengeOf(t, request(s.pub, "1000"))
	exp, _ := time.Parse(time.RFC3339Nano, testExpires)
	for name, tc := range map[string]struct {
		expires string
		now     time.Time
		ok      bool
	}{
		"a millisecond before": {testExpires, exp.Add(-time.Millisecond), true},
		"exactly then":         {testExpires, exp, false},
		"after":                {testExpires, exp.Add(time.Second), false},
		"no expires":           {"", testNow, false},
		"an offset zone":       {"2026-11-28T07:17:43+02:00", testNow, true},
	} {
		c.Expires = tc.expires
		ch, err := Select([]Challenge{c}, wallet, nil, tc.now)
		var np *NotPayableError
		if tc.ok != (err == nil) || !tc.ok && (!errors.As(err, &np) || !np.Has(ReasonExpired)) {
			t.Errorf("%s: %v", name, err)
		}
		if tc.ok && !ch.Expires.After(tc.now) {
			t.Errorf("%s: expires %s", name, ch.Expires)
		}
	}
}

// A wallet that pays in several tokens pays a challenge in any of them:
// the choice carries the token, the most preferred token wins over a
// cheaper challenge in another (amounts of different tokens are not
// compared), the cheapest wins within a token, and a currency outside the
// wallet's tokens is refused naming them. A wallet given no tokens pays
// in USDC only.
func TestSelect_PaysInTheWalletsTokens(t *testing.T) {
	t.Parallel()
	w, s := newParty(t), newParty(t)
	usdcToken := solana.Devnet.USDC()
	in := func(tk solana.Token, amount string) Challenge {
		r := request(s.pub, amount)
		r["currency"] = tk.Mint.String()
		details(r)["tokenProgram"] = tk.Program.String()
		return challengeOf(t, r)
	}
	symbol := func(sym, amount string) Challenge {
		r := request(s.pub, amount)
		r["currency"] = sym
		delete(details(r), "tokenProgram")
		return challengeOf(t, r)
	}
	both := Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{usdcToken, devnetPYUSD}}
	pyusdFirst := Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{devnetPYUSD, usdcToken}}
	for _, tc := range []struct {
		name   string
		cs     []Challenge
		wallet Wallet
		token  solana.Token
		amount money.Quantity
	}{
		{"PYUSD only", []Challenge{in(devnetPYUSD, "700")}, both, devnetPYUSD, 700},
		{"PYUSD by symbol", []Challenge{symbol("PYUSD", "700")}, both, devnetPYUSD, 700},
		{"the preferred token over a cheaper one", []Challenge{in(devnetPYUSD, "500"), in(usdcToken, "900")}, both, usdcToken, 900},
		{"the other preference", []Challenge{in(usdcToken, "900"), in(devnetPYUSD, "500")}, pyusdFirst, devnetPYUSD, 500},
		{"the cheapest of the token", []Challenge{in(devnetPYUSD, "800"), symbol("usdg", "1"), symbol("pyusd", "600")}, both, devnetPYUSD, 600},
	} {
		c, err := Select(tc.cs, tc.wallet, nil, testNow)
		if err != nil || c.Token != tc.token || c.Amount != tc.amount {
			t.Fatalf("%s: choice %+v %v", tc.name, c, err)
		}
	}
	var np *NotPayableError
	_, err := Select([]Challenge{symbol("USDG", "1")}, both, nil, testNow)
	if !errors.As(err, &np) || !np.Has(ReasonAssetNotPayable) ||
		!strings.Contains(err.Error(), `currency "USDG" (mint 4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7) is not devnet USDC (4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU) or PYUSD (CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM)`) {
		t.Fatalf("USDG for a USDC and PYUSD wallet: %v", err)
	}
	if _, err := Select([]Challenge{in(devnetPYUSD, "1")}, Wallet{Network: solana.Devnet, Owner: w.pub}, nil, testNow); !errors.As(err, &np) || !np.Has(ReasonAssetNotPayable) {
		t.Fatalf("PYUSD for a wallet of no tokens: %v", err)
	}
	limit := money.Quantity(400)
	if _, err := Select([]Challenge{in(devnetPYUSD, "500")}, both, &limit, testNow); !errors.As(err, &np) || !np.Has(ReasonAmountOverMax) ||
		!strings.Contains(err.Error(), "amount 0.0005 PYUSD is over the cap of 0.0004 PYUSD") {
		t.Fatalf("over the cap: %v", err)
	}
	// The fee payer may not be the wallet's PYUSD account (Token-2022's
	// derivation, not SPL Token's).
	pyusdATA, _, _ := sol.FindAssociatedTokenAddressWithProgram(w.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	r := sponsored(request(s.pub, "1"), pyusdATA)
	r["currency"] = devnetPYUSD.Mint.String()
	details(r)["tokenProgram"] = sol.Token2022ProgramID.String()
	if _, err := Select([]Challenge{challengeOf(t, r)}, both, nil, testNow); !errors.As(err, &np) || !np.Has(ReasonFeePayerInvalid) {
		t.Fatalf("the fee payer is the wallet's PYUSD account: %v", err)
	}
}

// The choice carries the charge's terms: the primary amount and the
// splits, the fee payer (zero when the wallet pays), the expiry; its
// recipients are the primary then each split's.
func TestSelect_ChoiceCarriesTheTerms(t *testing.T) {
	t.Parallel()
	w, s, f, a, b := newParty(t), newParty(t), newParty(t), newParty(t), newParty(t)
	r := sponsored(request(s.pub, "10000"), f.pub)
	r["externalId"] = "order-42"
	details(r)["splits"] = []map[string]any{
		{"recipient": a.pub.String(), "amount": "1500", "memo": "fee"},
		{"recipient": b.pub.String(), "amount": "500", "ataCreationRequired": true},
	}
	c := choose(t, w, r)
	exp, _ := time.Parse(time.RFC3339Nano, testExpires)
	if c.Amount != 10_000 || c.Primary != 8_000 || !c.Recipient.Equals(s.pub) || !c.FeePayer.Equals(f.pub) || !c.Expires.Equal(exp) ||
		c.Charge.ExternalID != "order-42" || len(c.Splits) != 2 || c.Token != solana.Devnet.USDC() {
		t.Fatalf("choice %+v", c)
	}
	if got := c.Recipients(); !reflect.DeepEqual(got, []sol.PublicKey{s.pub, a.pub, b.pub}) {
		t.Fatalf("recipients %v", got)
	}
	delete(details(r), "feePayer")
	if c := choose(t, w, r); !c.FeePayer.IsZero() {
		t.Fatalf("the wallet pays, yet the fee payer is %s", c.FeePayer)
	}
}

package mpp

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// The official server's request decodes to its fields.
func TestChallenge_Charge_ReadsTheOfficialRequest(t *testing.T) {
	t.Parallel()
	ch, err := officialChallenge.Charge()
	if err != nil {
		t.Fatal(err)
	}
	six := 6
	want := &Charge{
		Amount: 10_000, Currency: solana.DevnetUSDCMint.String(), Recipient: sol.MustPublicKeyFromBase58("jf6w4yXD18Ke2du8qoRjUyCSusGezxtTdJbL9uw6Mfn"),
		Network: "devnet", Decimals: &six, TokenProgram: sol.TokenProgramID,
		FeePayer: true, FeePayerKey: sol.MustPublicKeyFromBase58("FbHTcJqHwvQPrR6WZhj3TRk78i1WpEeyLEPUWfaqsuvQ"),
		RecentBlockhash: sol.MustHashFromBase58("EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"),
	}
	if !reflect.DeepEqual(ch, want) || ch.Primary() != 10_000 {
		t.Fatalf("got  %+v\nwant %+v", ch, want)
	}
}

func TestChallenge_Charge(t *testing.T) {
	t.Parallel()
	s, f := newParty(t), newParty(t)
	ok := func() map[string]any { return sponsored(request(s.pub, "10000"), f.pub) }
	with := func(k string, v any) map[string]any {
		r := ok()
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
		return r
	}
	detail := func(k string, v any) map[string]any {
		r := ok()
		if v == nil {
			delete(details(r), k)
		} else {
			details(r)[k] = v
		}
		return r
	}
	split := func(recipient sol.PublicKey, amount string) map[string]any {
		return map[string]any{"recipient": recipient.String(), "amount": amount}
	}
	splits := func(ss ...map[string]any) map[string]any { return detail("splits", ss) }
	many := make([]map[string]any, MaxSplits)
	for i := range many {
		many[i] = split(newParty(t).pub, "100")
	}
	ataSplit := split(newParty(t).pub, "100")
	ataSplit["ataCreationRequired"] = true
	withATA := func(currency string) map[string]any {
		r := splits(ataSplit)
		r["currency"] = currency
		return r
	}
	cases := []struct {
		name string
		r    map[string]any
		want string // "" = valid
	}{
		{"valid", ok(), ""},
		{"unknown fields are ignored", func() map[string]any {
			r := with("future", map[string]any{"x": 1})
			details(r)["other"] = []int{1}
			return r
		}(), ""},
		{"the buyer pays the fee", detail("feePayer", nil), ""},
		{"feePayer false with a key", detail("feePayer", false), ""},
		{"no tokenProgram, decimals, recentBlockhash", func() map[string]any {
			r := ok()
			delete(details(r), "tokenProgram")
			delete(details(r), "decimals")
			return r
		}(), ""},
		{"currency sol", with("currency", "sol"), ""},
		{"currency SOL", with("currency", "SOL"), ""},
		{"currency by symbol", with("currency", "usdc"), ""},
		{"a description in the request", with("description", "x"), ""},
		{"externalId at 566 bytes", with("externalId", strings.Repeat("é", 283)), ""},
		{"an empty externalId", with("externalId", ""), ""},
		{"8 splits", splits(many...), ""},
		{"a split with a memo and ataCreationRequired false", splits(map[string]any{"recipient": s.pub.String(), "amount": "1", "memo": "fee", "ataCreationRequired": false}), ""},
		{"ataCreationRequired with the currency a mint", withATA(solana.DevnetUSDCMint.String()), ""},
		{"amount zero", with("amount", "0"), "amount is zero"},
		{"amount with leading zeros", with("amount", "010"), "leading zeros"},
		{"amount with decimals", with("amount", "0.01"), "not a whole number"},
		{"amount negative", with("amount", "-1"), "not a whole number"},
		{"amount a number", with("amount", 10000), "amount is missing or not a string"},
		{"amount over uint64", with("amount", "18446744073709551616"), "too large"},
		{"no amount", with("amount", nil), "amount is missing"},
		{"no currency", with("currency", nil), "currency is missing"},
		{"currency neither a symbol nor a mint", with("currency", "dollars"), "not sol, a stablecoin symbol or a mint address"},
		{"currency an EVM address", with("currency", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), "not sol, a stablecoin symbol or a mint address"},
		{"no recipient", with("recipient", nil), "recipient is missing"},
		{"recipient not base58", with("recipient", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"), "recipient \"0x209693Bc6afc0C5328bA36FaF03C514EF312287C\" is not a Solana address"},
		{"recipient the zero key", with("recipient", "11111111111111111111111111111111"), "is not a Solana address"},
		{"recipient a number", with("recipient", 5), "recipient is not a string"},
		{"externalId over 566 bytes", with("externalId", strings.Repeat("a", 567)), "externalId is 567 bytes"},
		{"externalId with a newline", with("externalId", "a\nb"), "externalId contains U+000A"},
		{"externalId a number", with("externalId", 42), "externalId is not a string"},
		{"description a number", with("description", 42), "description is not a string"},
		{"no methodDetails", with("methodDetails", nil), "methodDetails is missing or not an object"},
		{"methodDetails an array", with("methodDetails", []int{}), "methodDetails is missing or not an object"},
		{"network a number", detail("network", 1), "methodDetails.network is not a string"},
		{"decimals a string", detail("decimals", "6"), "methodDetails.decimals"},
		{"decimals a fraction", detail("decimals", 6.5), "methodDetails.decimals"},
		{"decimals negative", detail("decimals", -1), "methodDetails.decimals"},
		{"decimals over 255", detail("decimals", 256), "methodDetails.decimals"},
		{"tokenProgram not an address", detail("tokenProgram", "spl-token"), "methodDetails.tokenProgram"},
		{"feePayer a string", detail("feePayer", "true"), "methodDetails.feePayer is not a boolean"},
		{"feePayer without its key", detail("feePayerKey", nil), "methodDetails.feePayerKey is missing"},
		{"feePayerKey not an address", detail("feePayerKey", "seller"), "methodDetails.feePayerKey"},
		{"recentBlockhash not a hash", detail("recentBlockhash", "abc"), "methodDetails.recentBlockhash"},
		{"9 splits", splits(append(many, split(s.pub, "1"))...), "9 splits (at most 8)"},
		{"splits an object", detail("splits", map[string]any{}), "methodDetails"},
		{"a split not an object", detail("splits", []any{"x"}), "splits[0] is not an object"},
		{"a split of zero", splits(split(s.pub, "0")), "splits[0].amount is zero"},
		{"a split without a recipient", splits(map[string]any{"amount": "1"}), "splits[0].recipient is missing"},
		{"splits taking the whole amount", splits(split(s.pub, "6000"), split(f.pub, "4000")), "leave nothing of the amount"},
		{"splits over the amount", splits(split(s.pub, "10001")), "leave nothing of the amount"},
		{"splits whose sum overflows", splits(split(s.pub, "18446744073709551615"), split(f.pub, "2")), "overflows"},
		{"a split memo over 566 bytes", splits(map[string]any{"recipient": s.pub.String(), "amount": "1", "memo": strings.Repeat("m", 567)}), "splits[0].memo is 567 bytes"},
		{"a split memo with a bidi override", splits(map[string]any{"recipient": s.pub.String(), "amount": "1", "memo": "fee\u202e"}), "splits[0].memo contains U+202E"},
		{"ataCreationRequired a string", splits(map[string]any{"recipient": s.pub.String(), "amount": "1", "ataCreationRequired": "yes"}), "not a boolean"},
		{"ataCreationRequired with the currency a symbol", withATA("USDC"), "needs the currency given as a mint address"},
		{"ataCreationRequired with SOL", withATA("sol"), "needs the currency given as a mint address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := challengeOf(t, tc.r).Charge()
			if tc.want == "" {
				if err != nil || ch == nil {
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

// The request decodes in either base64 alphabet, padded or not (the
// official decoder accepts each), but not in both at once; nor a method
// other than solana's charge, nor bytes that are not UTF-8.
func TestChallenge_Charge_RequestEncodings(t *testing.T) {
	t.Parallel()
	s := newParty(t)
	r := request(s.pub, "1000")
	r["externalId"] = "ÿÿÿ>>>???" // makes + and / appear in standard base64
	raw := mustJSON(t, r)
	for name, enc := range map[string]string{
		"base64url": base64.RawURLEncoding.EncodeToString(raw), "base64url padded": base64.URLEncoding.EncodeToString(raw),
		"base64": base64.RawStdEncoding.EncodeToString(raw), "base64 padded": base64.StdEncoding.EncodeToString(raw),
	} {
		c := challengeOf(t, r)
		c.Request = enc
		if ch, err := c.Charge(); err != nil || ch.ExternalID != "ÿÿÿ>>>???" {
			t.Errorf("%s: %v", name, err)
		}
	}
	std := base64.StdEncoding.EncodeToString(raw)
	if !strings.ContainsAny(std, "+/") {
		t.Fatal("the test request has no + or /")
	}
	mixed := challengeOf(t, r)
	mixed.Request = strings.Replace(base64.RawURLEncoding.EncodeToString(raw), "A", "+", 1) + "_"
	if _, err := mixed.Charge(); !errors.Is(err, ErrInvalidChallenge) {
		t.Errorf("mixed alphabets: %v", err)
	}
	other := challengeOf(t, r)
	other.Method = "tempo"
	if _, err := other.Charge(); !errors.Is(err, ErrInvalidChallenge) || !strings.Contains(err.Error(), `method "tempo" intent "charge" is not solana charge`) {
		t.Errorf("a tempo challenge: %v", err)
	}
	session := challengeOf(t, r)
	session.Intent = "session"
	if _, err := session.Charge(); !errors.Is(err, ErrInvalidChallenge) {
		t.Errorf("a session challenge: %v", err)
	}
	bad := challengeOf(t, r)
	bad.Request = base64.RawURLEncoding.EncodeToString([]byte("{\"amount\":\"1\xff\"}"))
	if _, err := bad.Charge(); !errors.Is(err, ErrInvalidChallenge) || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("not UTF-8: %v", err)
	}
}

// Splits keep their order and fields; the primary recipient gets the
// amount less their sum.
func TestChallenge_Charge_Splits(t *testing.T) {
	t.Parallel()
	s, a, b := newParty(t), newParty(t), newParty(t)
	r := request(s.pub, "10000")
	details(r)["splits"] = []map[string]any{
		{"recipient": a.pub.String(), "amount": "1500", "memo": "platform fee"},
		{"recipient": b.pub.String(), "amount": "500", "ataCreationRequired": true},
	}
	ch, err := challengeOf(t, r).Charge()
	if err != nil {
		t.Fatal(err)
	}
	want := []Split{{Recipient: a.pub, Amount: 1500, Memo: "platform fee"}, {Recipient: b.pub, Amount: 500, ATACreationRequired: true}}
	if !reflect.DeepEqual(ch.Splits, want) || ch.Primary() != 8000 || ch.Amount != 10_000 {
		t.Fatalf("splits %+v, primary %d", ch.Splits, ch.Primary())
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

// The symbol table resolves as the official code's does: any case, the
// network's mint or else mainnet's, SOL to nothing, anything else as
// itself; and its default programs.
func TestResolveMint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ currency, network, mint string }{
		{"USDC", "devnet", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"},
		{"usdc", "mainnet-beta", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
		{"UsDc", "localnet", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
		{"USDT", "devnet", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"},
		{"pyusd", "devnet", "CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"},
		{"USDG", "mainnet-beta", "2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH"},
		{"CASH", "devnet", "CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH"},
		{"sol", "devnet", ""}, {"SOL", "mainnet-beta", ""},
		{"HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr", "devnet", "HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"},
	} {
		if got := resolveMint(tc.currency, tc.network); got != tc.mint {
			t.Errorf("resolveMint(%q, %q) = %q, want %q", tc.currency, tc.network, got, tc.mint)
		}
	}
	for _, tc := range []struct {
		currency, network string
		program           sol.PublicKey
	}{
		{"USDC", "devnet", sol.TokenProgramID}, {"PYUSD", "devnet", sol.Token2022ProgramID},
		{"CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM", "devnet", sol.Token2022ProgramID},
		{"4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7", "devnet", sol.Token2022ProgramID},
		{"HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr", "devnet", sol.TokenProgramID},
	} {
		if got := defaultTokenProgram(tc.currency, tc.network); !got.Equals(tc.program) {
			t.Errorf("defaultTokenProgram(%q) = %s, want %s", tc.currency, got, tc.program)
		}
	}
}

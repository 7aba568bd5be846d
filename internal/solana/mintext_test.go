package solana_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/solana/minttest"
)

func keyOf(s string) *sol.PublicKey {
	k := sol.MustPublicKeyFromBase58(s)
	return &k
}

var (
	issuer   = keyOf("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")
	delegate = keyOf("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
)

// mintSeeds are mints of every shape the parser reads, for the table test
// and as the fuzz target's seed corpus.
func mintSeeds() map[string]minttest.Mint {
	return map[string]minttest.Mint{
		"plain":   {MintAuthority: issuer, Decimals: 6},
		"freeze":  {MintAuthority: issuer, FreezeAuthority: issuer, Decimals: 2},
		"paxos":   {MintAuthority: issuer, FreezeAuthority: issuer, Decimals: 6, Extensions: []minttest.Extension{{Type: 3, Value: issuer[:]}, minttest.PermanentDelegate(delegate), minttest.TransferHook(issuer, nil)}},
		"unset":   {Decimals: 6, Extensions: []minttest.Extension{minttest.PermanentDelegate(nil)}},
		"frozen":  {FreezeAuthority: issuer, Decimals: 6, Extensions: []minttest.Extension{minttest.DefaultAccountState(true)}},
		"thawed":  {FreezeAuthority: issuer, Decimals: 6, Extensions: []minttest.Extension{minttest.DefaultAccountState(false)}},
		"scaled":  {Decimals: 6, Extensions: []minttest.Extension{minttest.ScaledUIAmount(issuer, 1.5, 2_000_000_000, 2)}},
		"accrues": {Decimals: 9, Extensions: []minttest.Extension{minttest.InterestBearing(issuer, 1_700_000_000, 500)}},
		"paused":  {Decimals: 6, Extensions: []minttest.Extension{minttest.Pausable(issuer, true), minttest.TransferHook(nil, delegate)}},
	}
}

// Every fact a mint states is read from its bytes: the freeze authority
// of the base, and under Token-2022 the permanent delegate (unset is no
// delegate), the default frozen state, a hook, a pause, a scaled UI
// amount and interest.
func TestParseMintFacts_ReadsWhatTheIssuerCanDoAndHowAmountsRead(t *testing.T) {
	t.Parallel()
	seeds := mintSeeds()
	for _, c := range []struct {
		name  string
		check func(solana.MintFacts) bool
	}{
		{"plain", func(f solana.MintFacts) bool { return f == solana.MintFacts{} }},
		{"freeze", func(f solana.MintFacts) bool { return f.FreezeAuthority.Equals(*issuer) && !f.IssuerCanSeize() }},
		{"paxos", func(f solana.MintFacts) bool {
			return f.IssuerCanSeize() && f.PermanentDelegate.Equals(*delegate) && f.TransferHook == nil && !f.DefaultFrozen
		}},
		{"unset", func(f solana.MintFacts) bool { return !f.IssuerCanSeize() }},
		{"frozen", func(f solana.MintFacts) bool { return f.DefaultFrozen }},
		{"thawed", func(f solana.MintFacts) bool { return !f.DefaultFrozen && f.FreezeAuthority != nil }},
		{"scaled", func(f solana.MintFacts) bool {
			s := f.ScaledUIAmount
			return s != nil && s.Multiplier == 1.5 && s.NewMultiplier == 2 && s.MultiplierAt(1_999_999_999) == 1.5 && s.MultiplierAt(2_000_000_000) == 2
		}},
		{"accrues", func(f solana.MintFacts) bool {
			i := f.InterestBearing
			return i != nil && i.CurrentRate == 500 && i.InitializedAt == 1_700_000_000 && i.RateAuthority.Equals(*issuer)
		}},
		{"paused", func(f solana.MintFacts) bool { return f.Paused && f.TransferHook.Equals(*delegate) }},
	} {
		m := seeds[c.name]
		program := sol.TokenProgramID
		if len(m.Extensions) > 0 {
			program = sol.Token2022ProgramID
		}
		f, err := solana.ParseMintFacts(program, m.Bytes())
		if err != nil || !c.check(f) {
			t.Errorf("%s: %+v %v", c.name, f, err)
		}
	}
	good := seeds["paxos"].Bytes()
	for name, data := range map[string][]byte{
		"short":           good[:81],
		"uninitialized":   append(append([]byte{}, good[:45]...), make([]byte, 37)...),
		"bad option tag":  func() []byte { d := append([]byte{}, good...); d[46] = 7; return d }(),
		"no account type": func() []byte { d := append([]byte{}, good...); d[165] = 2; return d }(),
		"dirty padding":   func() []byte { d := append([]byte{}, good...); d[100] = 1; return d }(),
		"entry past end":  good[:len(good)-1],
		"short delegate":  minttest.Mint{Decimals: 6, Extensions: []minttest.Extension{{Type: 12, Value: make([]byte, 31)}}}.Bytes(),
		"zero multiplier": minttest.Mint{Decimals: 6, Extensions: []minttest.Extension{minttest.ScaledUIAmount(nil, 0, 0, 1)}}.Bytes(),
		"extended on SPL": append(append([]byte{}, seeds["plain"].Bytes()...), 0),
	} {
		program := sol.Token2022ProgramID
		if name == "extended on SPL" {
			program = sol.TokenProgramID
		}
		if _, err := solana.ParseMintFacts(program, data); !errors.Is(err, solana.ErrMalformedMint) {
			t.Errorf("%s: %v, want ErrMalformedMint", name, err)
		}
	}
}

// Any bytes parse to facts or to ErrMalformedMint, never a panic; facts
// come only from an initialized mint of at least the base's size.
func FuzzParseMintFacts(f *testing.F) {
	for _, m := range mintSeeds() {
		f.Add(true, m.Bytes())
	}
	f.Add(false, minttest.Mint{Decimals: 6}.Bytes())
	f.Add(true, []byte{})
	f.Fuzz(func(t *testing.T, is2022 bool, data []byte) {
		program := sol.TokenProgramID
		if is2022 {
			program = sol.Token2022ProgramID
		}
		facts, err := solana.ParseMintFacts(program, data)
		if err != nil {
			if !errors.Is(err, solana.ErrMalformedMint) {
				t.Fatalf("error %v is not ErrMalformedMint", err)
			}
			return
		}
		if len(data) < 82 || data[45] != 1 {
			t.Fatalf("facts %+v from %d bytes that are no initialized mint", facts, len(data))
		}
		if !is2022 && len(data) != 82 {
			t.Fatalf("facts from an SPL Token mint of %d bytes", len(data))
		}
		if s := facts.ScaledUIAmount; s != nil && (!(s.Multiplier > 0) || !(s.NewMultiplier > 0)) {
			t.Fatalf("multiplier %+v", s)
		}
	})
}

// The localnet's PYUSD is built as the real one is: its issuer can seize
// (a permanent delegate) and freeze, and new accounts start thawed; USDC
// (SPL Token) shows no such powers there. A mint put on the chain with a
// default frozen state and a scaled UI amount reads as such.
func TestMints_ReadTheFactsOfEachMint(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	odd := minttest.NewMint(t, ln.URL, sol.Token2022ProgramID, minttest.Mint{MintAuthority: issuer, FreezeAuthority: issuer, Decimals: 6,
		Extensions: []minttest.Extension{minttest.DefaultAccountState(true), minttest.ScaledUIAmount(issuer, 1.25, 0, 1.25)}})
	pyusd := sol.MustPublicKeyFromBase58("CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM")
	got, err := c.Mints(context.Background(), []sol.PublicKey{pyusd, solana.DevnetUSDCMint, odd})
	if err != nil {
		t.Fatal(err)
	}
	py, usdc, o := got[0], got[1], got[2]
	if py.FactsErr != nil || !py.Facts.IssuerCanSeize() || py.Facts.FreezeAuthority == nil || py.Facts.DefaultFrozen || py.Facts.TransferHook != nil {
		t.Fatalf("PYUSD %+v", py)
	}
	if usdc.FactsErr != nil || usdc.Facts.IssuerCanSeize() || usdc.Facts.DefaultFrozen {
		t.Fatalf("USDC %+v", usdc)
	}
	if o.FactsErr != nil || !o.Facts.DefaultFrozen || o.Facts.ScaledUIAmount == nil || o.Facts.ScaledUIAmount.Multiplier != 1.25 || o.Decimals != 6 {
		t.Fatalf("built mint %+v", o)
	}
}

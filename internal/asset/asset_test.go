package asset_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

const someMint = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"

func TestParse_AddsAnOperatorsAssetOrSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		spec, err string
	}{
		{"", ""},
		{"devnet:TEST:" + someMint + ":token:6:USD", ""},
		{" mainnet:EUROX:" + someMint + ":token-2022:6:EUR , ", ""},
		{"devnet:CENT:" + someMint + ":token:2:USD", ""},
		{"devnet:NANO:" + someMint + ":token-2022:9:USD", ""},
		{"devnet:WHOLE:" + someMint + ":token:0:EUR", ""},
		{"devnet:TEST:" + someMint + ":token:10:USD", `decimals "10": want 0 to 9`},
		{"testnet:TEST:" + someMint + ":token:6:USD", `network "testnet"`},
		{"devnet:test:" + someMint + ":token:6:USD", `symbol "test"`},
		{"devnet:T:" + someMint + ":token:6:USD", `symbol "T"`},
		{"devnet:SOL:" + someMint + ":token:6:USD", `symbol "SOL" is reserved`},
		{"devnet:ALL:" + someMint + ":token:6:USD", `symbol "ALL" is reserved`},
		{"devnet:TEST:notamint:token:6:USD", `mint "notamint"`},
		{"devnet:TEST:" + someMint + ":token2022:6:USD", `program "token2022"`},
		{"devnet:TEST:" + someMint + ":token:19:USD", `decimals "19"`},
		{"devnet:TEST:" + someMint + ":token:six:USD", `decimals "six"`},
		{"devnet:TEST:" + someMint + ":token:6:GBP", `currency "GBP"`},
		{"devnet:TEST:" + someMint + ":token:6", "want network:SYMBOL:mint:program:decimals:currency"},
		{"devnet:USDC:" + someMint + ":token:6:USD", "USDC is already an asset of devnet"},
		{"devnet:USDC2:4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU:token:6:USD", "is already USDC on devnet"},
	} {
		tab, err := asset.Defaults().With(c.spec)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.spec, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "ASSETS:")):
			t.Errorf("%q: error %v, want one naming ASSETS and saying %q", c.spec, err, c.err)
		case c.err == "" && strings.Contains(c.spec, "TEST"):
			if a, ok := tab.Find(solana.Devnet, "test"); !ok || a.Decimals != 6 || a.Currency != asset.USD || a.ProgramName() != "token" {
				t.Errorf("%q: devnet TEST is %+v %v", c.spec, a, ok)
			}
		}
	}
}

// The defaults hold on the localnet, which carries the real mints; a
// table that says otherwise than the chain (decimals, program, a mint
// that does not exist) is refused, naming the asset.
func TestVerify_TheTableMustAgreeWithTheChain(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	c := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)
	ctx := context.Background()
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		if err := asset.Defaults().Verify(ctx, n, c); err != nil {
			t.Fatalf("%s defaults: %v", n, err)
		}
	}
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	if pyusd.ProgramName() != "token-2022" {
		t.Fatalf("PYUSD %+v", pyusd)
	}
	for _, c2 := range []struct {
		spec, got string
	}{
		{"devnet:WRONGDEC:So11111111111111111111111111111111111111112:token:6:USD", "with 9 decimals"},
		{"devnet:WRONGPROG:" + solana.MainnetUSDCMint.String() + ":token-2022:6:USD", "owned by " + sol.TokenProgramID.String()},
		{"devnet:NOMINT:" + someMint + ":token:6:USD", "missing"},
	} {
		tab, err := asset.Table{solana.Devnet: nil}.With(c2.spec)
		if err != nil {
			t.Fatal(err)
		}
		var mm *asset.MismatchError
		if err := tab.Verify(ctx, solana.Devnet, c); !errors.As(err, &mm) || !strings.Contains(err.Error(), c2.got) {
			t.Fatalf("%s: %v, want a mismatch saying %q", c2.spec, err, c2.got)
		}
	}
}

// A book whose node does not answer has no reading (GET /assets then
// shows the facts as null, with no facts_read_at); once a node answers,
// the next Get reads the mints and keeps their facts.
func TestBook_NoReadingUntilTheNodeAnswers(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	dead := solana.NewClient("http://127.0.0.1:1", solana.Devnet, 200*time.Millisecond)
	book := asset.NewBook(nil, map[solana.Network]asset.Mints{solana.Devnet: dead})
	if r, ok := book.Get(ctx, solana.Devnet); ok || r.Facts != nil {
		t.Fatalf("read through a dead node: %+v", r)
	}
	if _, ok := book.Get(ctx, solana.Mainnet); ok {
		t.Fatal("read a network without a node")
	}
	book = asset.NewBook(nil, map[solana.Network]asset.Mints{solana.Devnet: solana.NewClient(ln.URL, solana.Devnet, 5*time.Second)})
	r, ok := book.Get(ctx, solana.Devnet)
	pyusd, _ := asset.Defaults().Find(solana.Devnet, "PYUSD")
	if !ok || r.At.IsZero() || len(r.Facts) != len(asset.Defaults().Of(solana.Devnet)) || !r.Facts[pyusd.Mint].IssuerCanSeize() {
		t.Fatalf("reading %+v %v", r, ok)
	}
}

// Amounts are micros whatever the asset's decimals; the chain moves base
// units: a 2-decimal asset carries whole cents only, a 9-decimal one any
// micro (1,000 base units), a 0-decimal one whole units.
func TestBaseUnits_MicrosBecomeTheAssetsUnitsExactlyOrNotAtAll(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		decimals uint8
		micros   int64
		units    uint64
		finer    bool
	}{
		{6, 1_234_567, 1_234_567, false},
		{2, 1_250_000, 125, false},
		{2, 1_005_000, 0, true},
		{2, 10_000, 1, false},
		{2, 1, 0, true},
		{0, 3_000_000, 3, false},
		{0, 3_500_000, 0, true},
		{9, 1, 1_000, false},
		{9, 1_500_000, 1_500_000_000, false},
		{9, 18_000_000_000_000_000, 18_000_000_000_000_000_000, false},
	} {
		a := asset.Asset{Symbol: "X", Decimals: c.decimals, Currency: asset.USD}
		got, err := a.BaseUnits(money.Quantity(c.micros))
		var pe *solana.PrecisionError
		if c.finer != errors.As(err, &pe) || (!c.finer && (err != nil || got != c.units)) {
			t.Errorf("%d decimals, %d micros: %d %v", c.decimals, c.micros, got, err)
		}
	}
	// The policy's largest amount is more base units of a 9-decimal
	// asset than a transfer can carry: refused, never wrapped.
	if _, err := (asset.Asset{Symbol: "X", Decimals: 9}).BaseUnits(money.Quantity(money.MaxMicros)); err == nil {
		t.Error("an amount past a u64 of base units was converted")
	}
}

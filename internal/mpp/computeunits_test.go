package mpp

import (
	"context"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// lowBump is an owner whose associated account of tk has a bump of at
// most max: its creation costs the most compute.
func lowBump(t *testing.T, tk solana.Token, max uint8) sol.PublicKey {
	t.Helper()
	for range 1 << 16 {
		p := newParty(t)
		if _, bump, err := sol.FindAssociatedTokenAddressWithProgram(p.pub, tk.Mint, tk.Program); err == nil && bump <= max {
			return p.pub
		}
	}
	t.Fatal("no low-bump owner found")
	return sol.PublicKey{}
}

// The compute-unit limit covers what each charge shape spends on the
// localnet (simulated with the very transaction built: the nonce at 0),
// in SPL Token and Token-2022: the transfer alone, the longest memos,
// splits whose accounts are created (by the seller's fee payer, as the
// split asks; of low bumps: the costliest) or already exist; and where
// every account is created it stays within the classic SPL Token
// allowance and 10% of what runs.
func TestComputeUnits_CoverEachChargeShape(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	client := solana.NewClient(ln.URL, solana.Devnet, 0)
	for _, tk := range []solana.Token{solana.Devnet.USDC(), devnetPYUSD} {
		t.Run(tk.Symbol, func(t *testing.T) {
			t.Parallel()
			w := newParty(t)
			ln.SetLamports(t, w.pub.String(), 10_000_000_000)
			ln.SetTokenBalance(t, w.pub.String(), tk.Mint.String(), 1_000_000_000)
			f := newParty(t) // the seller's fee payer
			ln.SetLamports(t, f.pub.String(), 10_000_000_000)
			wallet := Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{tk}}
			existing := func() sol.PublicKey {
				p := newParty(t)
				ln.SetTokenBalance(t, p.pub.String(), tk.Mint.String(), 0)
				return p.pub
			}
			type split struct {
				to     sol.PublicKey
				memo   string
				exists bool
			}
			for _, sh := range []struct {
				name       string
				externalID string
				splits     []split
				allCreated bool // every split's account is created here
			}{
				{"the transfer alone", "", nil, true},
				{"a memo of 566 ASCII bytes", strings.Repeat("a", 566), nil, true},
				{"a memo of 566 bytes in 283 letters", strings.Repeat("é", 283), nil, true},
				{"a memo of emoji", strings.Repeat("🌦", 141), nil, true},
				{"a split whose account is created", "", []split{{to: newParty(t).pub}}, true},
				{"a split of a low bump with a memo", "order-42", []split{{to: lowBump(t, tk, 251), memo: strings.Repeat("m", 200)}}, true},
				{"a split whose account exists", "", []split{{to: existing(), exists: true}}, false},
				{"three splits created", "inv", []split{{to: lowBump(t, tk, 252), memo: "a"}, {to: newParty(t).pub}, {to: newParty(t).pub, memo: "c"}}, true},
			} {
				recipient := existing()
				r := sponsored(request(recipient, "100000"), f.pub)
				r["currency"] = tk.Mint.String()
				details(r)["tokenProgram"] = tk.Program.String()
				if sh.externalID != "" {
					r["externalId"] = sh.externalID
				}
				var splits []map[string]any
				for _, s := range sh.splits {
					e := map[string]any{"recipient": s.to.String(), "amount": "1000"}
					if !s.exists {
						e["ataCreationRequired"] = true
					}
					if s.memo != "" {
						e["memo"] = s.memo
					}
					splits = append(splits, e)
				}
				if splits != nil {
					details(r)["splits"] = splits
				}
				c, err := Select([]Challenge{challengeOf(t, r)}, wallet, nil, testNow)
				if err != nil {
					t.Fatal(err)
				}
				bh, err := client.LatestBlockhash(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				tx, err := BuildTransaction(context.Background(), c, w.pub, signer.Plain(w.key), bh.Hash, BuildOptions{Nonce: nonce(0)})
				if err != nil {
					t.Fatalf("%s: %v", sh.name, err)
				}
				var res struct {
					Value struct {
						Err           any
						Logs          []string
						UnitsConsumed uint32
					}
				}
				ln.Call(t, &res, "simulateTransaction", tx.Base64, map[string]any{"encoding": "base64", "commitment": "confirmed"})
				if res.Value.Err != nil {
					t.Fatalf("%s: %v %v", sh.name, res.Value.Err, res.Value.Logs)
				}
				used, limit := res.Value.UnitsConsumed, tx.ComputeUnitLimit
				allowance := uint32(0)
				if !tk.Is2022() {
					allowance = unitsClassicTransfer * uint32(1+len(sh.splits))
					allowance += unitsClassicCreate * uint32(len(sh.splits))
				}
				tight := (used+allowance+300)*11/10 + 100
				if used > limit || sh.allCreated && limit > tight {
					t.Errorf("%s: used %d, limit %d (want between, at most %d)", sh.name, used, limit, tight)
				}
			}
		})
	}
}

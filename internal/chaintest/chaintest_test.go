package chaintest_test

import (
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// balance is owner's SOL and USDC (its associated account) through the
// service's own client.
func balance(t *testing.T, ln *localnettest.Localnet, owner sol.PublicKey) solana.Balance {
	t.Helper()
	b, err := solana.NewClient(ln.URL, solana.Devnet, 5*time.Second).Balance(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tokenBalance is a token account's amount (getTokenAccountBalance).
func tokenBalance(t *testing.T, ln *localnettest.Localnet, account sol.PublicKey) uint64 {
	t.Helper()
	var res struct {
		Value struct {
			Amount   string `json:"amount"`
			Decimals int    `json:"decimals"`
		} `json:"value"`
	}
	ln.Call(t, &res, "getTokenAccountBalance", account.String(), map[string]any{"commitment": "confirmed"})
	if res.Value.Decimals != 6 {
		t.Fatalf("%s: %d decimals", account, res.Value.Decimals)
	}
	n, err := strconv.ParseUint(res.Value.Amount, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// instruction is one instruction of a transaction as getTransaction
// answers it in base64 (accounts and program as indexes into the keys).
type instruction struct {
	ProgramIDIndex int    `json:"programIdIndex"`
	Accounts       []int  `json:"accounts"`
	Data           string `json:"data"` // base58
	StackHeight    *int   `json:"stackHeight"`
}

// landed is a confirmed transaction: its keys (static, as no lookup table
// is used), top-level and inner instructions, and token balances.
type landed struct {
	Keys  []sol.PublicKey
	Top   []instruction
	Inner map[int][]instruction // top-level instruction's index → its inner instructions
	Pre   map[string]uint64     // token account → amount
	Post  map[string]uint64
	Owner map[string]string // token account → owner (postTokenBalances)
	Fee   uint64
}

func getTransaction(t *testing.T, ln *localnettest.Localnet, sig string) landed {
	t.Helper()
	type tokenBalance struct {
		AccountIndex  int    `json:"accountIndex"`
		Mint          string `json:"mint"`
		Owner         string `json:"owner"`
		UITokenAmount struct {
			Amount string `json:"amount"`
		} `json:"uiTokenAmount"`
	}
	var res struct {
		Transaction struct {
			Message struct {
				AccountKeys  []string      `json:"accountKeys"`
				Instructions []instruction `json:"instructions"`
			} `json:"message"`
		} `json:"transaction"`
		Meta struct {
			Err               any `json:"err"`
			Fee               uint64
			InnerInstructions []struct {
				Index        int           `json:"index"`
				Instructions []instruction `json:"instructions"`
			} `json:"innerInstructions"`
			PreTokenBalances  []tokenBalance `json:"preTokenBalances"`
			PostTokenBalances []tokenBalance `json:"postTokenBalances"`
		} `json:"meta"`
	}
	ln.Call(t, &res, "getTransaction", sig, map[string]any{"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0})
	if res.Meta.Err != nil {
		t.Fatalf("%s failed: %v", sig, res.Meta.Err)
	}
	var l landed
	for _, k := range res.Transaction.Message.AccountKeys {
		l.Keys = append(l.Keys, sol.MustPublicKeyFromBase58(k))
	}
	l.Top = res.Transaction.Message.Instructions
	l.Inner = map[int][]instruction{}
	for _, in := range res.Meta.InnerInstructions {
		l.Inner[in.Index] = append(l.Inner[in.Index], in.Instructions...)
	}
	l.Fee = res.Meta.Fee
	amounts := func(bs []tokenBalance) map[string]uint64 {
		m := map[string]uint64{}
		for _, b := range bs {
			n, _ := strconv.ParseUint(b.UITokenAmount.Amount, 10, 64)
			m[l.Keys[b.AccountIndex].String()] = n
		}
		return m
	}
	l.Pre, l.Post = amounts(res.Meta.PreTokenBalances), amounts(res.Meta.PostTokenBalances)
	l.Owner = map[string]string{}
	for _, b := range res.Meta.PostTokenBalances {
		l.Owner[l.Keys[b.AccountIndex].String()] = b.Owner
	}
	return l
}

// program is the program an instruction runs.
func (l landed) program(in instruction) sol.PublicKey { return l.Keys[in.ProgramIDIndex] }

// account is an instruction's i-th account.
func (l landed) account(in instruction, i int) sol.PublicKey { return l.Keys[in.Accounts[i]] }

// tokenTransfers are the SPL Token Transfer (3) and TransferChecked (12)
// instructions among ins: their source, destination and amount.
func (l landed) tokenTransfers(t *testing.T, ins []instruction) []transfer {
	t.Helper()
	var out []transfer
	for _, in := range ins {
		if !l.program(in).Equals(sol.TokenProgramID) {
			continue
		}
		data := sol.Base58(nil)
		if err := data.UnmarshalJSON([]byte(strconv.Quote(in.Data))); err != nil {
			t.Fatal(err)
		}
		switch {
		case len(data) == 9 && data[0] == 3:
			out = append(out, transfer{Kind: 3, From: l.account(in, 0), To: l.account(in, 1), Authority: l.account(in, 2), Amount: binary.LittleEndian.Uint64(data[1:])})
		case len(data) == 10 && data[0] == 12:
			if data[9] != 6 || !l.account(in, 1).Equals(chaintest.USDCMint) {
				t.Fatalf("TransferChecked of mint %s, %d decimals", l.account(in, 1), data[9])
			}
			out = append(out, transfer{Kind: 12, From: l.account(in, 0), To: l.account(in, 2), Authority: l.account(in, 3), Amount: binary.LittleEndian.Uint64(data[1:])})
		}
	}
	return out
}

type transfer struct {
	Kind                byte
	From, To, Authority sol.PublicKey
	Amount              uint64
}

func programs(l landed, ins []instruction) []string {
	var out []string
	for _, in := range ins {
		out = append(out, l.program(in).String())
	}
	return out
}

// The programs' addresses, as getTransaction names them.
var (
	ataProgram       = sol.SPLAssociatedTokenAccountProgramID.String()
	tokenProgram     = sol.TokenProgramID.String()
	systemProgram    = sol.SystemProgramID.String()
	forwarderProgram = chaintest.ForwarderProgramID.String()
)

// newOwner is a wallet address nobody has used: no SOL, no USDC account.
func newOwner() sol.PublicKey { return sol.NewWallet().PublicKey() }

type sendUSDC func(p *chaintest.Payer, t testing.TB, to sol.PublicKey, micros uint64) string

// TransferUSDC and TransferCheckedUSDC: the first payment to a wallet
// creates its USDC account in the same transaction, later ones are the
// token instruction alone; the transfer is top level, never inner; equal
// payments are distinct transactions that all land.
func TestTransferUSDCTopLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kind byte
		send sendUSDC
	}{
		{"Transfer", 3, (*chaintest.Payer).TransferUSDC},
		{"TransferChecked", 12, (*chaintest.Payer).TransferCheckedUSDC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln := localnettest.Shared(t)
			p := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
			to := newOwner()
			toATA := chaintest.USDCAccount(to)
			want := transfer{Kind: tc.kind, From: p.USDCAccount(), To: toATA, Authority: p.PublicKey(), Amount: 1_000_000}

			l := getTransaction(t, ln, tc.send(p, t, to, 1_000_000))
			if got := programs(l, l.Top); !slices.Equal(got, []string{ataProgram, tokenProgram}) {
				t.Fatalf("first payment's instructions: %v", got)
			}
			if got := l.tokenTransfers(t, l.Top); len(got) != 1 || got[0] != want {
				t.Fatalf("top-level transfers: %+v, want %+v", got, want)
			}
			if got := l.tokenTransfers(t, l.Inner[0]); len(got) != 0 {
				t.Fatalf("account creation moved tokens: %+v", got)
			}
			if l.Post[toATA.String()] != 1_000_000 || l.Owner[toATA.String()] != to.String() {
				t.Fatalf("post token balances: %v, owners %v", l.Post, l.Owner)
			}

			sigs := []string{tc.send(p, t, to, 1_000_000), tc.send(p, t, to, 1_000_000)}
			if sigs[0] == sigs[1] {
				t.Fatal("two equal payments are one transaction")
			}
			for i, sig := range sigs {
				l := getTransaction(t, ln, sig)
				if got := programs(l, l.Top); !slices.Equal(got, []string{tokenProgram}) {
					t.Fatalf("payment %d's instructions: %v", i+2, got)
				}
				if got := l.tokenTransfers(t, l.Top); len(got) != 1 || got[0] != want {
					t.Fatalf("payment %d's transfers: %+v", i+2, got)
				}
				if len(l.Inner) != 0 {
					t.Fatalf("payment %d has inner instructions: %+v", i+2, l.Inner)
				}
			}
			if b := balance(t, ln, to); b.Units(solana.Devnet.USDCMint()) != 3_000_000 {
				t.Fatalf("recipient: %+v", b)
			}
			if got := tokenBalance(t, ln, p.USDCAccount()); got != 7_000_000 {
				t.Fatalf("payer: %d", got)
			}
		})
	}
}

// TransferUSDCByCPI and TransferCheckedUSDCByCPI move the amount into the
// recipient's associated account, and the transfer is an inner
// instruction of the forwarder, with no top-level token instruction;
// jsonParsed shows it as a parsed inner transfer. The first payment also
// creates the account (top level, before the forwarder).
func TestTransferUSDCByCPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kind byte
		send sendUSDC
	}{
		{"Transfer", 3, (*chaintest.Payer).TransferUSDCByCPI},
		{"TransferChecked", 12, (*chaintest.Payer).TransferCheckedUSDCByCPI},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln := localnettest.Shared(t)
			p := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
			to := newOwner()
			toATA := chaintest.USDCAccount(to)

			amounts := []uint64{1_250_000, 2_000_000}
			sigs := []string{tc.send(p, t, to, amounts[0]), tc.send(p, t, to, amounts[1])}
			if b := balance(t, ln, to); b.Units(solana.Devnet.USDCMint()) != 3_250_000 {
				t.Fatalf("recipient: %+v", b)
			}
			if got := tokenBalance(t, ln, p.USDCAccount()); got != 10_000_000-3_250_000 {
				t.Fatalf("payer: %d", got)
			}

			for i, sig := range sigs {
				l := getTransaction(t, ln, sig)
				wantTop := []string{ataProgram, forwarderProgram}
				if i > 0 { // the account exists
					wantTop = wantTop[1:]
				}
				if got := programs(l, l.Top); !slices.Equal(got, wantTop) {
					t.Fatalf("payment %d's instructions: %v, want %v", i+1, got, wantTop)
				}
				if got := l.tokenTransfers(t, l.Top); len(got) != 0 {
					t.Fatalf("payment %d: top-level token transfers %+v", i+1, got)
				}
				fwd := len(wantTop) - 1
				inner := l.Inner[fwd]
				want := transfer{Kind: tc.kind, From: p.USDCAccount(), To: toATA, Authority: p.PublicKey(), Amount: amounts[i]}
				if got := l.tokenTransfers(t, inner); len(inner) != 1 || len(got) != 1 || got[0] != want {
					t.Fatalf("payment %d: the forwarder's inner instructions %+v are transfers %+v, want %+v", i+1, inner, got, want)
				}
				if h := inner[0].StackHeight; h == nil || *h != 2 {
					t.Fatalf("payment %d: inner transfer's stack height %v", i+1, h)
				}
				if l.Pre[toATA.String()]+amounts[i] != l.Post[toATA.String()] || l.Owner[toATA.String()] != to.String() {
					t.Fatalf("payment %d: token balances %v → %v, owners %v", i+1, l.Pre, l.Post, l.Owner)
				}
				checkParsedInnerTransfer(t, ln, sig, fwd, toATA, amounts[i])
			}
		})
	}
}

// checkParsedInnerTransfer reads sig with jsonParsed, as a deposit
// watcher may: no top-level spl-token instruction, and among the inner
// instructions of top-level instruction index, an spl-token transfer of
// amount into dest.
func checkParsedInnerTransfer(t *testing.T, ln *localnettest.Localnet, sig string, index int, dest sol.PublicKey, amount uint64) {
	t.Helper()
	type parsedIx struct {
		Program string `json:"program"`
		Parsed  struct {
			Type string `json:"type"`
			Info struct {
				Destination string `json:"destination"`
				Amount      string `json:"amount"`
				TokenAmount *struct {
					Amount string `json:"amount"`
				} `json:"tokenAmount"`
			} `json:"info"`
		} `json:"parsed"`
	}
	var res struct {
		Transaction struct {
			Message struct {
				Instructions []parsedIx `json:"instructions"`
			} `json:"message"`
		} `json:"transaction"`
		Meta struct {
			InnerInstructions []struct {
				Index        int        `json:"index"`
				Instructions []parsedIx `json:"instructions"`
			} `json:"innerInstructions"`
		} `json:"meta"`
	}
	ln.Call(t, &res, "getTransaction", sig, map[string]any{"encoding": "jsonParsed", "commitment": "confirmed", "maxSupportedTransactionVersion": 0})
	for _, ix := range res.Transaction.Message.Instructions {
		if ix.Program == "spl-token" {
			t.Fatalf("jsonParsed: a top-level spl-token instruction: %+v", ix)
		}
	}
	for _, g := range res.Meta.InnerInstructions {
		if g.Index != index {
			continue
		}
		for _, ix := range g.Instructions {
			got := ix.Parsed.Info.Amount
			if ix.Parsed.Info.TokenAmount != nil {
				got = ix.Parsed.Info.TokenAmount.Amount
			}
			if ix.Program == "spl-token" && (ix.Parsed.Type == "transfer" || ix.Parsed.Type == "transferChecked") &&
				ix.Parsed.Info.Destination == dest.String() && got == strconv.FormatUint(amount, 10) {
				return
			}
		}
	}
	t.Fatalf("jsonParsed: no inner spl-token transfer of %d to %s under instruction %d: %+v", amount, dest, index, res.Meta.InnerInstructions)
}

// NewTokenAccount makes a USDC account of the owner's that is not its
// associated one, and TransferUSDCToAccount pays into it: the owner's
// address is in no instruction, only in the token balances.
func TestTransferUSDCToAccount(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	p := chaintest.NewPayer(t, ln, 10_000_000, solana.LamportsPerSOL)
	to := newOwner()

	account := p.NewTokenAccount(t, to)
	if account.Equals(chaintest.USDCAccount(to)) {
		t.Fatal("NewTokenAccount made the associated account")
	}
	var info struct {
		Value struct {
			Owner string `json:"owner"`
			Data  struct {
				Parsed struct {
					Type string `json:"type"`
					Info struct {
						Mint  string `json:"mint"`
						Owner string `json:"owner"`
					} `json:"info"`
				} `json:"parsed"`
			} `json:"data"`
		} `json:"value"`
	}
	ln.Call(t, &info, "getAccountInfo", account.String(), map[string]any{"encoding": "jsonParsed", "commitment": "confirmed"})
	if v := info.Value; v.Owner != tokenProgram || v.Data.Parsed.Type != "account" || v.Data.Parsed.Info.Owner != to.String() || v.Data.Parsed.Info.Mint != chaintest.USDCMint.String() {
		t.Fatalf("new account: %+v", v)
	}
	if got := tokenBalance(t, ln, account); got != 0 {
		t.Fatalf("new account holds %d", got)
	}
	payerBefore := balance(t, ln, p.PublicKey()).Lamports

	sig := p.TransferUSDCToAccount(t, account, 2_000_000)

	if got := tokenBalance(t, ln, account); got != 2_000_000 {
		t.Fatalf("account: %d", got)
	}
	if b := balance(t, ln, to); b.Units(solana.Devnet.USDCMint()) != 0 || b.Lamports != 0 {
		t.Fatalf("the owner's associated account or SOL changed: %+v", b)
	}
	l := getTransaction(t, ln, sig)
	if got := programs(l, l.Top); !slices.Equal(got, []string{tokenProgram}) {
		t.Fatalf("instructions: %v", got)
	}
	want := transfer{Kind: 3, From: p.USDCAccount(), To: account, Authority: p.PublicKey(), Amount: 2_000_000}
	if got := l.tokenTransfers(t, l.Top); len(got) != 1 || got[0] != want {
		t.Fatalf("transfers: %+v, want %+v", got, want)
	}
	if slices.Contains(l.Keys, to) {
		t.Fatal("the owner's address is among the transaction's accounts")
	}
	if l.Owner[account.String()] != to.String() || l.Post[account.String()] != 2_000_000 {
		t.Fatalf("post token balances: %v, owners %v", l.Post, l.Owner)
	}
	if got := balance(t, ln, p.PublicKey()).Lamports; got != payerBefore-l.Fee {
		t.Fatalf("payer's lamports: %d, want %d - fee %d", got, payerBefore, l.Fee)
	}
}

// TransferSOL is a lone top-level System transfer; TransferSOLByCPI's
// is the forwarder's inner instruction. Both credit the recipient.
func TestTransferSOL(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	p := chaintest.NewPayer(t, ln, 0, solana.LamportsPerSOL)
	to := newOwner()

	sig := p.TransferSOL(t, to, 5_000_000)
	if b := balance(t, ln, to); b.Lamports != 5_000_000 {
		t.Fatalf("recipient: %+v", b)
	}
	l := getTransaction(t, ln, sig)
	if got := programs(l, l.Top); !slices.Equal(got, []string{systemProgram}) || len(l.Inner) != 0 {
		t.Fatalf("instructions: %v, inner %+v", got, l.Inner)
	}
	if got := balance(t, ln, p.PublicKey()).Lamports; got != solana.LamportsPerSOL-5_000_000-l.Fee {
		t.Fatalf("payer: %d (fee %d)", got, l.Fee)
	}

	sig = p.TransferSOLByCPI(t, to, 3_000_000)
	if b := balance(t, ln, to); b.Lamports != 8_000_000 {
		t.Fatalf("recipient after the CPI: %+v", b)
	}
	l = getTransaction(t, ln, sig)
	if got := programs(l, l.Top); !slices.Equal(got, []string{forwarderProgram}) {
		t.Fatalf("instructions: %v", got)
	}
	inner := l.Inner[0]
	if len(inner) != 1 || !l.program(inner[0]).Equals(sol.SystemProgramID) ||
		!l.account(inner[0], 0).Equals(p.PublicKey()) || !l.account(inner[0], 1).Equals(to) {
		t.Fatalf("inner instructions: %+v", inner)
	}
	data := sol.Base58(nil)
	if err := data.UnmarshalJSON([]byte(strconv.Quote(inner[0].Data))); err != nil {
		t.Fatal(err)
	}
	if len(data) != 12 || binary.LittleEndian.Uint32(data) != 2 || binary.LittleEndian.Uint64(data[4:]) != 3_000_000 {
		t.Fatalf("inner instruction data %x: not System Transfer of 3,000,000", data)
	}
}

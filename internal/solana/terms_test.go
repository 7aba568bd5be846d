package solana_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// accountData is an account's data and lamports on ln (nil data: none).
func accountData(t *testing.T, ln *localnettest.Localnet, addr sol.PublicKey) ([]byte, uint64) {
	t.Helper()
	var res struct {
		Value *struct {
			Data     []string `json:"data"`
			Lamports uint64   `json:"lamports"`
		} `json:"value"`
	}
	ln.Call(t, &res, "getAccountInfo", addr.String(), map[string]any{"encoding": "base64", "commitment": "confirmed"})
	if res.Value == nil {
		return nil, 0
	}
	data, err := base64.StdEncoding.DecodeString(res.Value.Data[0])
	if err != nil {
		t.Fatal(err)
	}
	return data, res.Value.Lamports
}

// mintCopy writes a new Token-2022 mint at a fresh address on ln: tk's
// mint's data (PYUSD's eight extensions) changed by edit, as an issuer
// could change it. The shared PYUSD mint stays as it is. It returns the
// copy as a Token.
func mintCopy(t *testing.T, ln *localnettest.Localnet, tk solana.Token, edit func(data []byte) []byte) solana.Token {
	t.Helper()
	data, lamports := accountData(t, ln, tk.Mint)
	if data == nil {
		t.Fatalf("no %s mint", tk.Symbol)
	}
	mint, _ := newWallet(t)
	ln.Call(t, nil, "surfnet_setAccount", mint.String(), map[string]any{
		"lamports": lamports * 2, "owner": tk.Program.String(),
		"data": []string{base64.StdEncoding.EncodeToString(edit(data)), "base64"},
	})
	tk.Mint, tk.Symbol = mint, tk.Symbol+"-copy"
	return tk
}

// extension is the value of a Token-2022 mint's extension typ in data
// (a slice of it: writing it edits data), nil when absent.
func extension(data []byte, typ uint16) []byte {
	for o := 166; o+4 <= len(data); {
		ty, n := binary.LittleEndian.Uint16(data[o:]), int(binary.LittleEndian.Uint16(data[o+2:]))
		if ty == typ {
			return data[o+4 : o+4+n]
		}
		o += 4 + n
	}
	return nil
}

// withExtension is data with one more TLV entry at its end.
func withExtension(data []byte, typ uint16, value []byte) []byte {
	out := append([]byte{}, data...)
	out = binary.LittleEndian.AppendUint16(out, typ)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(value)))
	return append(out, value...)
}

// The size and rent TokenTerms answers for a new recipient account are
// those of the account the ATA program makes on the localnet, for SPL
// Token mints (165 bytes) and for PYUSD and USDG (Token-2022 with a
// transfer fee config and a transfer hook extension: ImmutableOwner,
// TransferFeeAmount and TransferHookAccount, 187 bytes).
func TestTokenTerms_AccountSizeAndRentAreWhatTheChainMakes(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"USDC": 165, "USDT": 165, "EURC": 165, "PYUSD": 187, "USDG": 187}
	for _, tk := range []solana.Token{solana.Devnet.USDC(), usdt, eurc, pyusd, usdg} {
		terms, err := c.TokenTerms(ctx, tk)
		if err != nil {
			t.Fatalf("%s: %v", tk.Symbol, err)
		}
		if terms.AccountSize != want[tk.Symbol] || terms.AccountRentLamports != solana.RentExemptLamports(terms.AccountSize) {
			t.Fatalf("%s: terms %+v, want %d bytes", tk.Symbol, terms, want[tk.Symbol])
		}
		// The ATA program makes a new recipient's account in a real transfer.
		owner, secret := fundedWallet(t, ln, 0)
		ln.SetTokenBalance(t, owner.String(), tk.Mint.String(), 5)
		to, _ := newWallet(t)
		tx, err := c.BuildTransfer(solana.Transfer{Token: tk, Owner: owner, To: to, Amount: 5}, bh)
		if err != nil {
			t.Fatal(err)
		}
		raw, sig, err := solana.Sign(ctx, tx, signer.Plain(secret))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Broadcast(ctx, raw); err != nil {
			t.Fatalf("%s: %v", tk.Symbol, err)
		}
		waitConfirmed(t, c, sig)
		ata, _, _ := sol.FindAssociatedTokenAddressWithProgram(to, tk.Mint, tk.Program)
		data, lamports := accountData(t, ln, ata)
		if len(data) != terms.AccountSize || lamports != terms.AccountRentLamports {
			t.Fatalf("%s: the chain made a %d-byte account holding %d lamports; TokenTerms says %d bytes, %d lamports",
				tk.Symbol, len(data), lamports, terms.AccountSize, terms.AccountRentLamports)
		}
	}
	if solana.RentExemptLamports(165) != solana.TokenAccountRentLamports || solana.RentExemptLamports(187) != 2_192_400 {
		t.Fatalf("rent of 165 bytes %d, of 187 bytes %d", solana.RentExemptLamports(165), solana.RentExemptLamports(187))
	}
}

// A mint the service cannot send as it builds transfers is refused with
// an *UnsupportedTokenError naming why: a transfer hook program set (its
// extra accounts are not resolved), a transfer fee in force now or from
// the next epoch, a paused or non-transferable mint, a mint of other
// decimals or program than the token says, or no mint at all. A fee
// scheduled further ahead, and PYUSD as it is, are sendable.
func TestTokenTerms_RefusesWhatATransferCannotCarry(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	var epoch struct{ Epoch uint64 }
	ln.Call(t, &epoch, "getEpochInfo")
	fee := func(at uint64, bps uint16) func([]byte) []byte {
		return func(d []byte) []byte {
			v := extension(d, 1) // TransferFeeConfig: the newer fee at 90
			binary.LittleEndian.PutUint64(v[90:], at)
			binary.LittleEndian.PutUint64(v[98:], 1_000_000)
			binary.LittleEndian.PutUint16(v[106:], bps)
			return d
		}
	}
	hook, _ := newWallet(t)
	missing, _ := newWallet(t)
	cases := []struct {
		name   string
		tk     solana.Token
		reason solana.UnsupportedReason
		says   string
	}{
		{"transfer hook", mintCopy(t, ln, pyusd, func(d []byte) []byte {
			copy(extension(d, 14)[32:], hook[:]) // TransferHook: authority, program id
			return d
		}), solana.UnsupportedTransferHook, "transfer hook (program " + hook.String() + "); the service does not resolve a hook's extra accounts"},
		{"transfer fee now", mintCopy(t, ln, pyusd, fee(epoch.Epoch, 25)), solana.UnsupportedTransferFee, "transfer fee (25 basis points): the recipient would receive less than the amount"},
		{"transfer fee from the next epoch", mintCopy(t, ln, pyusd, fee(epoch.Epoch+1, 10)), solana.UnsupportedTransferFee, "10 basis points"},
		{"paused", mintCopy(t, ln, pyusd, func(d []byte) []byte {
			return withExtension(d, 26, append(make([]byte, 32), 1)) // Pausable: authority, paused
		}), solana.UnsupportedPaused, "paused"},
		{"non-transferable", mintCopy(t, ln, pyusd, func(d []byte) []byte { return withExtension(d, 9, nil) }), solana.UnsupportedNonTransferable, "non-transferable"},
		{"other decimals", solana.Token{Symbol: "PYUSD", Mint: pyusd.Mint, Program: pyusd.Program, Decimals: 9}, solana.UnsupportedMismatch, "6 decimals, not 9"},
		{"other program", solana.Token{Symbol: "PYUSD", Mint: pyusd.Mint, Program: sol.TokenProgramID, Decimals: 6}, solana.UnsupportedMismatch, "owned by " + sol.Token2022ProgramID.String()},
		{"no mint", solana.Token{Symbol: "GONE", Mint: missing, Program: sol.TokenProgramID, Decimals: 6}, solana.UnsupportedMissing, "no mint"},
	}
	for _, tc := range cases {
		_, err := c.TokenTerms(ctx, tc.tk)
		var ue *solana.UnsupportedTokenError
		if !errors.As(err, &ue) || ue.Reason != tc.reason || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), tc.tk.Mint.String()) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, tc.reason, tc.says)
		}
	}
	for name, tk := range map[string]solana.Token{
		"PYUSD":                         pyusd,
		"a fee two epochs ahead":        mintCopy(t, ln, pyusd, fee(epoch.Epoch+2, 25)),
		"a paused extension, unpaused":  mintCopy(t, ln, pyusd, func(d []byte) []byte { return withExtension(d, 26, make([]byte, 33)) }),
		"a hook extension with no hook": mintCopy(t, ln, pyusd, func(d []byte) []byte { return d }),
	} {
		terms, err := c.TokenTerms(ctx, tk)
		if err != nil || terms.AccountSize < 187 {
			t.Errorf("%s: %+v %v, want sendable", name, terms, err)
		}
	}
}

// A mint's terms are read once per TermsMaxAge, refusals included: a
// burst of sends reads the mint once, and an issuer's change (here a hook
// set on the mint) reaches sends once the kept answer has aged out.
func TestTokenTerms_KeptForTermsMaxAge(t *testing.T) {
	t.Parallel()
	ln := localnettest.Start(t)
	ctx := context.Background()
	c := solana.NewClient(ln.URL, solana.Devnet, 0)
	var mu sync.Mutex
	now := time.Now()
	solana.SetTermsClock(c, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	ln.ResetCalls(t)
	for range 5 {
		if _, err := c.TokenTerms(ctx, pyusd); err != nil {
			t.Fatal(err)
		}
	}
	if n := ln.Calls(t)["getMultipleAccounts"]; n != 1 {
		t.Fatalf("%d reads for 5 asks within TermsMaxAge", n)
	}
	data, lamports := accountData(t, ln, pyusd.Mint)
	hook, _ := newWallet(t)
	copy(extension(data, 14)[32:], hook[:])
	ln.Call(t, nil, "surfnet_setAccount", pyusd.Mint.String(), map[string]any{
		"lamports": lamports, "data": []string{base64.StdEncoding.EncodeToString(data), "base64"}})
	advance(solana.TermsMaxAge - time.Second)
	if _, err := c.TokenTerms(ctx, pyusd); err != nil {
		t.Fatalf("within TermsMaxAge: %v, want the kept answer", err)
	}
	advance(time.Second)
	var ue *solana.UnsupportedTokenError
	if _, err := c.TokenTerms(ctx, pyusd); !errors.As(err, &ue) || ue.Reason != solana.UnsupportedTransferHook {
		t.Fatalf("after TermsMaxAge: %v, want the hook refused", err)
	}
	ln.ResetCalls(t)
	if _, err := c.TokenTerms(ctx, pyusd); !errors.As(err, &ue) {
		t.Fatalf("the refusal again: %v", err)
	}
	if n := ln.Calls(t)["getMultipleAccounts"]; n != 0 {
		t.Fatalf("a kept refusal read the mint %d times", n)
	}
}

package x402

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

var testBlockhash = sol.MustHashFromBase58("EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N")

// choose selects the payable entry of a challenge for w on devnet.
func choose(t testing.TB, w party, challenge map[string]any) Choice {
	t.Helper()
	c, err := mustParse(t, challenge).Select(Wallet{Network: solana.Devnet, Owner: w.pub}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The transaction decodes, with solana-go's own program decoders, to
// exactly the scheme's shape, and its bytes round-trip.
func TestBuildTransaction_Shape(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "1234567")
	e["extra"].(map[string]any)["memo"] = "pi_3abc123 ✓"
	c := choose(t, w, challengeV2(e))
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tx.Base64 != base64.StdEncoding.EncodeToString(tx.Wire) || tx.Memo != "pi_3abc123 ✓" || tx.Blockhash != testBlockhash {
		t.Fatalf("tx %+v", tx)
	}
	decoded, err := sol.TransactionFromBytes(tx.Wire)
	if err != nil {
		t.Fatal(err)
	}
	again, err := decoded.MarshalBinary()
	if err != nil || !bytes.Equal(again, tx.Wire) {
		t.Fatalf("round trip: %v", err)
	}
	m := decoded.Message
	if !m.IsVersioned() || m.GetVersion() != sol.MessageVersionV0 || tx.Wire[1+2*64] != 0x80 {
		t.Fatal("not a v0 message")
	}
	if m.Header.NumRequiredSignatures != 2 || !m.AccountKeys[0].Equals(f.pub) || !m.AccountKeys[1].Equals(w.pub) {
		t.Fatalf("signers %v %v", m.Header, m.AccountKeys[:2])
	}
	if !decoded.Signatures[0].IsZero() {
		t.Fatal("fee payer's slot signed")
	}
	msg, _ := m.MarshalBinary()
	if !ed25519.Verify(ed25519.PublicKey(w.pub[:]), msg, decoded.Signatures[1][:]) || decoded.Signatures[1] != tx.OwnerSignature {
		t.Fatal("wallet signature")
	}
	if len(m.Instructions) != 4 {
		t.Fatalf("%d instructions", len(m.Instructions))
	}
	accounts := func(i int) []*sol.AccountMeta {
		a, err := m.Instructions[i].ResolveInstructionAccounts(&m)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	program := func(i int) sol.PublicKey { return m.AccountKeys[m.Instructions[i].ProgramIDIndex] }

	limit, err := computebudget.DecodeInstruction(accounts(0), m.Instructions[0].Data)
	// The seller set a memo: the limit is the default plus a random part
	// that tells purchases apart.
	if err != nil || !program(0).Equals(sol.ComputeBudget) {
		t.Fatalf("limit %v", err)
	}
	if u := limit.Impl.(*computebudget.SetComputeUnitLimit).Units; u < DefaultComputeUnitLimit || u > DefaultComputeUnitLimit+65535 {
		t.Fatalf("limit %d units", u)
	}
	price, err := computebudget.DecodeInstruction(accounts(1), m.Instructions[1].Data)
	if err != nil || !program(1).Equals(sol.ComputeBudget) || price.Impl.(*computebudget.SetComputeUnitPrice).MicroLamports != DefaultComputeUnitPrice {
		t.Fatalf("price %v", err)
	}
	ti, err := token.DecodeInstruction(accounts(2), m.Instructions[2].Data)
	if err != nil || !program(2).Equals(sol.TokenProgramID) {
		t.Fatalf("transfer %v", err)
	}
	transfer, ok := ti.Impl.(*token.TransferChecked)
	if !ok || *transfer.Amount != 1234567 || *transfer.Decimals != 6 {
		t.Fatalf("transfer %+v", ti.Impl)
	}
	src, _, _ := sol.FindAssociatedTokenAddress(w.pub, solana.DevnetUSDCMint)
	dst, _, _ := sol.FindAssociatedTokenAddress(s.pub, solana.DevnetUSDCMint)
	if !transfer.GetSourceAccount().PublicKey.Equals(src) || !transfer.GetDestinationAccount().PublicKey.Equals(dst) ||
		!transfer.GetMintAccount().PublicKey.Equals(solana.DevnetUSDCMint) || !transfer.GetOwnerAccount().PublicKey.Equals(w.pub) ||
		!transfer.GetOwnerAccount().IsSigner || !tx.SourceATA.Equals(src) || !tx.DestinationATA.Equals(dst) {
		t.Fatal("transfer accounts")
	}
	if !program(3).Equals(sol.MemoProgramID) || len(m.Instructions[3].Accounts) != 0 || string(m.Instructions[3].Data) != "pi_3abc123 ✓" {
		t.Fatal("memo")
	}
	for i := range m.Instructions {
		for _, a := range accounts(i) {
			if a.PublicKey.Equals(f.pub) {
				t.Fatalf("instruction %d names the fee payer", i)
			}
		}
	}
}

// Without extra.memo each payment carries a fresh 16-byte hex nonce, so
// two payments of the same challenge are different transactions.
func TestBuildTransaction_NonceMakesPaymentsUnique(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, challengeV2(entry(s.pub, f.pub, "1000")))
	a, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := hex.DecodeString(a.Memo); err != nil || len(raw) != 16 || a.Memo == b.Memo || a.OwnerSignature == b.OwnerSignature {
		t.Fatalf("nonces %q %q", a.Memo, b.Memo)
	}
	n, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: "0123456789abcdef0123"})
	if err != nil || n.Memo != "0123456789abcdef0123" {
		t.Fatalf("given nonce: %v", err)
	}
}

func TestBuildTransaction_Options(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, challengeV2(entry(s.pub, f.pub, "1000")))
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{
		TokenProgram: sol.TokenProgramID, ComputeUnitLimit: MaxComputeUnitLimit, ComputeUnitPrice: MaxComputeUnitPrice,
	})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sol.TransactionFromBytes(tx.Wire)
	if u := binary.LittleEndian.Uint32(m.Message.Instructions[0].Data[1:]); u != MaxComputeUnitLimit {
		t.Fatalf("limit %d", u)
	}
	if p := binary.LittleEndian.Uint64(m.Message.Instructions[1].Data[1:]); p != MaxComputeUnitPrice {
		t.Fatalf("price %d", p)
	}
}

// A PYUSD requirement, chosen by a wallet that pays in PYUSD, is paid by
// a TransferChecked under Token-2022 with PYUSD's decimals, between the
// wallet's and payTo's Token-2022 associated accounts; the self-check
// holds the transfer to that program.
func TestBuildTransaction_Token2022(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "1000")
	e["asset"] = devnetPYUSD.Mint.String()
	c, err := mustParse(t, challengeV2(e)).Select(Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{solana.Devnet.USDC(), devnetPYUSD}}, nil)
	if err != nil || c.Token != devnetPYUSD || !c.Asset.Equals(devnetPYUSD.Mint) {
		t.Fatalf("choice %+v %v", c, err)
	}
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: "00112233445566778899aabbccddeeff"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sol.TransactionFromBytes(tx.Wire)
	ix := m.Message.Instructions[2]
	src, _, _ := sol.FindAssociatedTokenAddressWithProgram(w.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	dst, _, _ := sol.FindAssociatedTokenAddressWithProgram(s.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	if !m.Message.AccountKeys[ix.ProgramIDIndex].Equals(sol.Token2022ProgramID) || !tx.SourceATA.Equals(src) || !tx.DestinationATA.Equals(dst) ||
		ix.Data[0] != 12 || ix.Data[9] != devnetPYUSD.Decimals {
		t.Fatalf("transfer program %s, data %v", m.Message.AccountKeys[ix.ProgramIDIndex], ix.Data)
	}
	want := expected{
		owner: w.pub, feePayer: f.pub, asset: devnetPYUSD.Mint, program: sol.Token2022ProgramID,
		source: src, dest: dst, amount: 1000, decimals: 6, memo: tx.Memo,
		limit: DefaultComputeUnitLimit, price: DefaultComputeUnitPrice, blockhash: testBlockhash,
	}
	if err := checkTransaction(tx.Wire, want); err != nil {
		t.Fatal(err)
	}
	spl := want
	spl.program = sol.TokenProgramID
	if err := checkTransaction(tx.Wire, spl); !errors.Is(err, ErrShape) {
		t.Fatalf("a Token-2022 transfer passed as SPL Token's: %v", err)
	}
	if _, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{TokenProgram: sol.TokenProgramID}); !errors.Is(err, ErrShape) {
		t.Fatalf("PYUSD under SPL Token: %v", err)
	}
}

func TestBuildTransaction_Refuses(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, challengeV2(entry(s.pub, f.pub, "1000")))
	walletPays := c
	walletPays.FeePayer = w.pub
	notSelected := c
	notSelected.challenge = nil
	zero := c
	zero.Amount = 0
	longMemo := c
	longMemo.Memo = strings.Repeat("m", MaxMemoBytes+1)
	for _, tc := range []struct {
		name string
		c    Choice
		key  ed25519.PrivateKey
		bh   sol.Hash
		opts BuildOptions
		want error
	}{
		{"fee payer is the wallet", walletPays, w.key, testBlockhash, BuildOptions{}, ErrFeePayerIsWallet},
		{"unknown token program", c, w.key, testBlockhash, BuildOptions{TokenProgram: sol.MemoProgramID}, ErrUnknownTokenProgram},
		{"USDC under Token-2022", c, w.key, testBlockhash, BuildOptions{TokenProgram: sol.Token2022ProgramID}, ErrShape},
		{"compute unit limit over the cap", c, w.key, testBlockhash, BuildOptions{ComputeUnitLimit: MaxComputeUnitLimit + 1}, ErrShape},
		{"compute unit price over the cap", c, w.key, testBlockhash, BuildOptions{ComputeUnitPrice: MaxComputeUnitPrice + 1}, ErrShape},
		{"nonce under 16 bytes", c, w.key, testBlockhash, BuildOptions{Nonce: "short"}, ErrShape},
		{"memo over 256 bytes", longMemo, w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"no blockhash", c, w.key, sol.Hash{}, BuildOptions{}, ErrShape},
		{"zero amount", zero, w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"a choice not from Select", notSelected, w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"a short key", c, w.key[:32], testBlockhash, BuildOptions{}, ErrInvalidKey},
	} {
		if _, err := BuildTransaction(context.Background(), tc.c, ownerOf(tc.key), signer.Plain(tc.key), tc.bh, tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	// The key never shows in an error.
	_, err := BuildTransaction(context.Background(), walletPays, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	for _, enc := range []string{base64.StdEncoding.EncodeToString(w.key), hex.EncodeToString(w.key), sol.PrivateKey(w.key).String()} {
		if strings.Contains(err.Error(), enc) {
			t.Fatal("key in error")
		}
	}
}

// checkTransaction refuses anything outside the shape, even when the
// wallet signed it: each tampered copy is re-signed and must fail.
func TestCheckTransaction_RefusesTampering(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, challengeV2(entry(s.pub, f.pub, "1000")))
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: "00112233445566778899aabbccddeeff"})
	if err != nil {
		t.Fatal(err)
	}
	want := expected{
		owner: w.pub, feePayer: f.pub, asset: solana.DevnetUSDCMint, program: sol.TokenProgramID,
		source: tx.SourceATA, dest: tx.DestinationATA, amount: 1000, decimals: 6, memo: tx.Memo,
		limit: DefaultComputeUnitLimit, price: DefaultComputeUnitPrice, blockhash: testBlockhash,
	}
	if err := checkTransaction(tx.Wire, want); err != nil {
		t.Fatal(err)
	}
	resign := func(mutate func(*sol.Transaction)) []byte {
		d, err := sol.TransactionFromBytes(tx.Wire)
		if err != nil {
			t.Fatal(err)
		}
		mutate(d)
		msg, err := d.Message.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Signatures) > 1 {
			copy(d.Signatures[1][:], ed25519.Sign(w.key, msg))
		}
		out, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	setU64 := func(b []byte, off int, v uint64) {
		for i := range 8 {
			b[off+i] = byte(v >> (8 * i))
		}
	}
	for name, mutate := range map[string]func(*sol.Transaction){
		"amount":   func(d *sol.Transaction) { setU64(d.Message.Instructions[2].Data, 1, 999) },
		"decimals": func(d *sol.Transaction) { d.Message.Instructions[2].Data[9] = 9 },
		"program": func(d *sol.Transaction) {
			d.Message.AccountKeys[d.Message.Instructions[2].ProgramIDIndex] = sol.Token2022ProgramID
		},
		"price over cap": func(d *sol.Transaction) {
			setU64(d.Message.Instructions[1].Data, 1, MaxComputeUnitPrice+1)
		},
		"memo": func(d *sol.Transaction) { d.Message.Instructions[3].Data = []byte("other memo text!") },
		"instructions swapped": func(d *sol.Transaction) {
			in := d.Message.Instructions
			in[0], in[1] = in[1], in[0]
		},
		"a fifth instruction": func(d *sol.Transaction) {
			d.Message.Instructions = append(d.Message.Instructions, d.Message.Instructions[3])
		},
		"fee payer as transfer authority": func(d *sol.Transaction) { d.Message.Instructions[2].Accounts[3] = 0 },
		"blockhash":                       func(d *sol.Transaction) { d.Message.RecentBlockhash = sol.Hash{1} },
		"legacy message":                  func(d *sol.Transaction) { d.Message.SetVersion(sol.MessageVersionLegacy) },
		"fee payer signed":                func(d *sol.Transaction) { d.Signatures[0] = sol.Signature{1} },
		"destination": func(d *sol.Transaction) {
			d.Message.Instructions[2].Accounts[2], d.Message.Instructions[2].Accounts[0] = d.Message.Instructions[2].Accounts[0], d.Message.Instructions[2].Accounts[2]
		},
	} {
		if err := checkTransaction(resign(mutate), want); !errors.Is(err, ErrShape) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// A signature that does not verify.
	bad := bytes.Clone(tx.Wire)
	bad[1+64] ^= 1
	if err := checkTransaction(bad, want); !errors.Is(err, ErrShape) {
		t.Errorf("bad signature: %v", err)
	}
}

// The header's JSON is exactly the spec's PaymentPayload of each version.
func TestEncodePaymentHeader(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	v2 := challengeV2(entry(s.pub, f.pub, "1000"), entry(s.pub, f.pub, "900"))
	v2["accepts"].([]map[string]any)[1]["extra"].(map[string]any)["future"] = map[string]any{"z": 1, "a": "<&>"}
	v2["extensions"] = map[string]any{"bazaar": map[string]any{"info": "x"}}
	c := choose(t, w, v2)
	p, err := Pay(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	raw, err := base64.StdEncoding.DecodeString(p.Value)
	if err != nil || json.Unmarshal(raw, &got) != nil || p.Header != HeaderPaymentSignature {
		t.Fatalf("header %s: %v", p.Header, err)
	}
	var sent map[string]any
	json.Unmarshal(mustJSON(t, v2), &sent)
	wantV2 := map[string]any{
		"x402Version": float64(2), "resource": sent["resource"], "accepted": sent["accepts"].([]any)[1],
		"payload": map[string]any{"transaction": p.Transaction.Base64}, "extensions": sent["extensions"],
	}
	if !reflect.DeepEqual(got, wantV2) {
		t.Fatalf("v2 payload\n got %v\nwant %v", got, wantV2)
	}

	c1 := choose(t, w, challengeV1(v1entry(s.pub, f.pub, "1000")))
	p1, err := Pay(context.Background(), c1, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = base64.StdEncoding.DecodeString(p1.Value)
	got = nil
	json.Unmarshal(raw, &got)
	wantV1 := map[string]any{"x402Version": float64(1), "scheme": "exact", "network": DevnetV1, "payload": map[string]any{"transaction": p1.Transaction.Base64}}
	if p1.Header != HeaderXPayment || !reflect.DeepEqual(got, wantV1) {
		t.Fatalf("v1 %s payload %v", p1.Header, got)
	}
}

func TestDecodePaymentResponseHeader(t *testing.T) {
	t.Parallel()
	sig := sol.SignatureFromBytes(bytes.Repeat([]byte{7}, 64))
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	r, err := DecodePaymentResponseHeader(enc(`{"success":true,"transaction":"` + sig.String() + `","network":"` + DevnetCAIP2 + `","payer":"abc"}`))
	if err != nil || !r.Success || r.Signature != sig || r.Network != DevnetCAIP2 || r.Payer != "abc" {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = DecodePaymentResponseHeader(enc(`{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"` + DevnetCAIP2 + `"}`))
	if err != nil || r.Success || r.ErrorReason != "insufficient_funds" || !r.Signature.IsZero() {
		t.Fatalf("%+v %v", r, err)
	}
	for name, v := range map[string]string{
		"not base64":               "{}",
		"success without tx":       enc(`{"success":true,"transaction":""}`),
		"success with an EVM hash": enc(`{"success":true,"transaction":"0x1234"}`),
		"success as a string":      enc(`{"success":"true","transaction":"` + sig.String() + `"}`),
		"no success":               enc(`{"transaction":"` + sig.String() + `"}`),
		"a number for a string":    enc(`{"success":false,"errorReason":5}`),
		"too long":                 strings.Repeat("A", 12<<10),
	} {
		if _, err := DecodePaymentResponseHeader(v); !errors.Is(err, ErrInvalidSettlement) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// ownerOf is the public key of a test wallet's key (zero for a key that is
// not one).
func ownerOf(key ed25519.PrivateKey) sol.PublicKey {
	if len(key) != ed25519.PrivateKeySize {
		return sol.PublicKey{}
	}
	return sol.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
}

// Two separate purchases from a seller whose challenge carries the same
// extra.memo, signed within one blockhash (the service caches blockhashes
// for up to 2 s: solana.BlockhashCache), are different transactions with
// different wallet signatures. Were they byte-identical, the chain would run
// one while the service held two signed payments that a worker matching
// "the memo on the wallet's token account" (or the wallet's signature)
// attributes to the same landed transfer.
func TestBuildTransaction_SellerMemoPaymentsAreUnique(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	e := entry(s.pub, f.pub, "1000")
	e["extra"].(map[string]any)["memo"] = "order"
	first := choose(t, w, challengeV2(e))
	second := choose(t, w, challengeV2(e))
	a, err := BuildTransaction(context.Background(), first, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildTransaction(context.Background(), second, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.OwnerSignature == b.OwnerSignature || string(a.Wire) == string(b.Wire) {
		t.Fatalf("two payments signed the same transaction (wallet signature %s, memo %q)", a.OwnerSignature, a.Memo)
	}
}

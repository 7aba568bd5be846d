package mpp

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

var testBlockhash = sol.MustHashFromBase58("EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N")

func nonce(n uint32) *uint32 { return &n }

// step is one instruction a test expects after the compute budget pair.
type step struct {
	kind   string // transfer, memo, create
	amount uint64
	to     sol.PublicKey // a transfer's or a creation's owner
	memo   string
	payer  sol.PublicKey // a creation's
}

// The transaction decodes, with solana-go's own decoders, to exactly the
// official client's: v0 with our blockhash; the signers (the seller's fee
// payer with an empty slot then the wallet, or the wallet alone) and the
// wallet's signature; SetComputeUnitPrice then SetComputeUnitLimit (the
// shape's compute plus the nonce); the primary TransferChecked, the
// externalId's memo, then per split its account's creation where the
// official client adds one, its TransferChecked and its memo; and its
// bytes round-trip.
func TestBuildTransaction_Shape(t *testing.T) {
	t.Parallel()
	w, s, f, a, b := newParty(t), newParty(t), newParty(t), newParty(t), newParty(t)
	withSplits := func(r map[string]any) map[string]any {
		details(r)["splits"] = []map[string]any{
			{"recipient": a.pub.String(), "amount": "1500", "memo": "platform fee"},
			{"recipient": b.pub.String(), "amount": "500", "ataCreationRequired": true},
		}
		return r
	}
	walletPays := request(s.pub, "1234567")
	walletPays["externalId"] = "pi_3abc123 ✓"
	for _, tc := range []struct {
		name  string
		r     map[string]any
		steps []step
	}{
		{"the wallet pays the fee", walletPays, []step{{kind: "transfer", amount: 1234567, to: s.pub}, {kind: "memo", memo: "pi_3abc123 ✓"}}},
		{"the seller pays the fee", sponsored(request(s.pub, "1000"), f.pub), []step{{kind: "transfer", amount: 1000, to: s.pub}}},
		{"splits, the seller paying: only the asked account is created, by the seller", withSplits(sponsored(request(s.pub, "10000"), f.pub)), []step{
			{kind: "transfer", amount: 8000, to: s.pub},
			{kind: "transfer", amount: 1500, to: a.pub}, {kind: "memo", memo: "platform fee"},
			{kind: "create", to: b.pub, payer: f.pub}, {kind: "transfer", amount: 500, to: b.pub},
		}},
		{"splits, the wallet paying: no account is created (the wallet pays no rent)", withSplits(request(s.pub, "10000")), []step{
			{kind: "transfer", amount: 8000, to: s.pub},
			{kind: "transfer", amount: 1500, to: a.pub}, {kind: "memo", memo: "platform fee"},
			{kind: "transfer", amount: 500, to: b.pub},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := choose(t, w, tc.r)
			tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: nonce(7)})
			if err != nil {
				t.Fatal(err)
			}
			sponsored := !c.FeePayer.IsZero()
			if tx.Base64 != base64.StdEncoding.EncodeToString(tx.Wire) || tx.Blockhash != testBlockhash ||
				tx.ComputeUnitLimit != ComputeUnits(c)+7 || tx.ComputeUnitPrice != DefaultComputeUnitPrice {
				t.Fatalf("tx %+v", tx)
			}
			decoded, err := sol.TransactionFromBytes(tx.Wire)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := decoded.MarshalBinary(); err != nil || !bytes.Equal(again, tx.Wire) {
				t.Fatalf("round trip: %v", err)
			}
			m := decoded.Message
			nsig := map[bool]int{false: 1, true: 2}[sponsored]
			if !m.IsVersioned() || m.GetVersion() != sol.MessageVersionV0 || tx.Wire[1+64*nsig] != 0x80 || len(m.AddressTableLookups) != 0 || m.RecentBlockhash != testBlockhash {
				t.Fatal("not a v0 message without lookup tables under our blockhash")
			}
			msg, _ := m.MarshalBinary()
			if sponsored {
				if m.Header.NumRequiredSignatures != 2 || m.Header.NumReadonlySignedAccounts != 1 || !m.AccountKeys[0].Equals(f.pub) || !m.AccountKeys[1].Equals(w.pub) {
					t.Fatalf("signers %+v %v", m.Header, m.AccountKeys[:2])
				}
				if !decoded.Signatures[0].IsZero() || decoded.Signatures[1] != tx.OwnerSignature {
					t.Fatal("signature slots")
				}
			} else if m.Header.NumRequiredSignatures != 1 || !m.AccountKeys[0].Equals(w.pub) || decoded.Signatures[0] != tx.OwnerSignature {
				t.Fatalf("signers %+v %v", m.Header, m.AccountKeys[:1])
			}
			if !ed25519.Verify(ed25519.PublicKey(w.pub[:]), msg, tx.OwnerSignature[:]) {
				t.Fatal("the wallet's signature does not verify")
			}
			if len(m.Instructions) != 2+len(tc.steps) {
				t.Fatalf("%d instructions, want %d", len(m.Instructions), 2+len(tc.steps))
			}
			accounts := func(i int) []*sol.AccountMeta {
				a, err := m.Instructions[i].ResolveInstructionAccounts(&m)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			program := func(i int) sol.PublicKey { return m.AccountKeys[m.Instructions[i].ProgramIDIndex] }
			price, err := computebudget.DecodeInstruction(accounts(0), m.Instructions[0].Data)
			if err != nil || !program(0).Equals(sol.ComputeBudget) || price.Impl.(*computebudget.SetComputeUnitPrice).MicroLamports != DefaultComputeUnitPrice {
				t.Fatalf("price %v", err)
			}
			limit, err := computebudget.DecodeInstruction(accounts(1), m.Instructions[1].Data)
			if err != nil || !program(1).Equals(sol.ComputeBudget) || limit.Impl.(*computebudget.SetComputeUnitLimit).Units != tx.ComputeUnitLimit {
				t.Fatalf("limit %v", err)
			}
			src, _, _ := sol.FindAssociatedTokenAddress(w.pub, solana.DevnetUSDCMint)
			for k, st := range tc.steps {
				i := k + 2
				switch st.kind {
				case "transfer":
					ti, err := token.DecodeInstruction(accounts(i), m.Instructions[i].Data)
					if err != nil || !program(i).Equals(sol.TokenProgramID) {
						t.Fatalf("instruction %d: %v", i, err)
					}
					tr, ok := ti.Impl.(*token.TransferChecked)
					dst, _, _ := sol.FindAssociatedTokenAddress(st.to, solana.DevnetUSDCMint)
					if !ok || *tr.Amount != st.amount || *tr.Decimals != 6 || !tr.GetSourceAccount().PublicKey.Equals(src) ||
						!tr.GetDestinationAccount().PublicKey.Equals(dst) || !tr.GetMintAccount().PublicKey.Equals(solana.DevnetUSDCMint) ||
						!tr.GetOwnerAccount().PublicKey.Equals(w.pub) || !tr.GetOwnerAccount().IsSigner {
						t.Fatalf("instruction %d: transfer %+v, want %d to %s", i, ti.Impl, st.amount, st.to)
					}
					if k == 0 && (!tx.SourceATA.Equals(src) || !tx.DestinationATA.Equals(dst)) {
						t.Fatal("the transaction's accounts")
					}
				case "memo":
					if !program(i).Equals(sol.MemoProgramID) || len(m.Instructions[i].Accounts) != 0 || string(m.Instructions[i].Data) != st.memo {
						t.Fatalf("instruction %d: memo %q", i, m.Instructions[i].Data)
					}
				case "create":
					acc := accounts(i)
					ata, _, _ := sol.FindAssociatedTokenAddress(st.to, solana.DevnetUSDCMint)
					want := []sol.PublicKey{st.payer, ata, st.to, solana.DevnetUSDCMint, sol.SystemProgramID, sol.TokenProgramID}
					if !program(i).Equals(sol.SPLAssociatedTokenAccountProgramID) || !bytes.Equal(m.Instructions[i].Data, []byte{1}) || len(acc) != 6 ||
						!acc[0].IsSigner || !acc[0].IsWritable || !acc[1].IsWritable {
						t.Fatalf("instruction %d: creation %v", i, m.Instructions[i])
					}
					for j, k := range want {
						if !acc[j].PublicKey.Equals(k) {
							t.Fatalf("instruction %d: creation account %d is %s, want %s", i, j, acc[j].PublicKey, k)
						}
					}
				}
			}
			for i := range m.Instructions {
				for k, a := range accounts(i) {
					if sponsored && a.PublicKey.Equals(f.pub) && !(program(i).Equals(sol.SPLAssociatedTokenAccountProgramID) && k == 0) {
						t.Fatalf("instruction %d names the fee payer", i)
					}
					if a.PublicKey.Equals(s.pub) {
						t.Fatalf("instruction %d names the primary recipient, not its token account", i)
					}
				}
			}
		})
	}
}

// Two purchases of the same terms under the same blockhash are different
// transactions, told apart by the compute-unit limit's nonce (the official
// server allows no memo of ours): were they byte-identical the chain
// would run one while two were counted. The nonce is drawn below
// NonceRange, and a given one is used as is.
func TestBuildTransaction_NonceMakesPaymentsUnique(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	r := sponsored(request(s.pub, "1000"), f.pub)
	r["externalId"] = "order-42"
	c := choose(t, w, r)
	need := ComputeUnits(c)
	limits := map[uint32]bool{}
	sigs := map[sol.Signature]bool{}
	for range 64 {
		tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tx.ComputeUnitLimit < need || tx.ComputeUnitLimit >= need+NonceRange {
			t.Fatalf("limit %d outside [%d, %d)", tx.ComputeUnitLimit, need, need+NonceRange)
		}
		limits[tx.ComputeUnitLimit] = true
		sigs[tx.OwnerSignature] = true
	}
	if len(limits) < 56 || len(sigs) != len(limits) {
		t.Fatalf("64 payments drew %d limits and %d signatures", len(limits), len(sigs))
	}
	a, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: nonce(NonceRange - 1)})
	if err != nil || a.ComputeUnitLimit != need+NonceRange-1 {
		t.Fatalf("a given nonce: %v", err)
	}
	b, _ := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: nonce(NonceRange - 1)})
	if !bytes.Equal(a.Wire, b.Wire) {
		t.Fatal("the same nonce built different transactions")
	}
}

// The options set the price, and the limit's compute before the nonce;
// the limit never passes the official cap.
func TestBuildTransaction_Options(t *testing.T) {
	t.Parallel()
	w, s := newParty(t), newParty(t)
	c := choose(t, w, request(s.pub, "1000"))
	for _, tc := range []struct {
		opts  BuildOptions
		limit uint32
		price uint64
	}{
		{BuildOptions{ComputeUnitLimit: 50_000, ComputeUnitPrice: 20_000, Nonce: nonce(9)}, 50_009, 20_000},
		{BuildOptions{ComputeUnitLimit: MaxComputeUnitLimit, ComputeUnitPrice: MaxComputeUnitPrice, Nonce: nonce(9)}, MaxComputeUnitLimit, MaxComputeUnitPrice},
		{BuildOptions{ComputeUnitLimit: MaxComputeUnitLimit - 100, Nonce: nonce(4000)}, MaxComputeUnitLimit, DefaultComputeUnitPrice},
	} {
		tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := sol.TransactionFromBytes(tx.Wire)
		if u := binary.LittleEndian.Uint32(m.Message.Instructions[1].Data[1:]); u != tc.limit || tx.ComputeUnitLimit != tc.limit {
			t.Errorf("limit %d, want %d", u, tc.limit)
		}
		if p := binary.LittleEndian.Uint64(m.Message.Instructions[0].Data[1:]); p != tc.price || tx.ComputeUnitPrice != tc.price {
			t.Errorf("price %d, want %d", p, tc.price)
		}
	}
}

// A PYUSD charge, chosen by a wallet that pays in PYUSD, is paid by
// TransferChecked under Token-2022 between the Token-2022 associated
// accounts, its split too (the wallet, paying the fee, creates no
// account); the self-check holds the transfers to that program.
func TestBuildTransaction_Token2022(t *testing.T) {
	t.Parallel()
	w, s, a := newParty(t), newParty(t), newParty(t)
	r := request(s.pub, "1000")
	r["currency"] = "PYUSD"
	delete(details(r), "tokenProgram")
	details(r)["splits"] = []map[string]any{{"recipient": a.pub.String(), "amount": "100"}}
	c, err := Select([]Challenge{challengeOf(t, r)}, Wallet{Network: solana.Devnet, Owner: w.pub, Tokens: []solana.Token{solana.Devnet.USDC(), devnetPYUSD}}, nil, testNow)
	if err != nil || c.Token != devnetPYUSD {
		t.Fatalf("choice %+v %v", c, err)
	}
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: nonce(0)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sol.TransactionFromBytes(tx.Wire)
	src, _, _ := sol.FindAssociatedTokenAddressWithProgram(w.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	dst, _, _ := sol.FindAssociatedTokenAddressWithProgram(s.pub, devnetPYUSD.Mint, sol.Token2022ProgramID)
	ix := m.Message.Instructions[2]
	split := m.Message.Instructions[3]
	if len(m.Message.Instructions) != 4 || !m.Message.AccountKeys[ix.ProgramIDIndex].Equals(sol.Token2022ProgramID) || !tx.SourceATA.Equals(src) || !tx.DestinationATA.Equals(dst) ||
		ix.Data[0] != 12 || ix.Data[9] != devnetPYUSD.Decimals || !m.Message.AccountKeys[split.ProgramIDIndex].Equals(sol.Token2022ProgramID) || split.Data[0] != 12 {
		t.Fatalf("transfer program %s, data %v", m.Message.AccountKeys[ix.ProgramIDIndex], ix.Data)
	}
	want := expectationOf(c, w.pub, tx.ComputeUnitLimit, tx.ComputeUnitPrice, testBlockhash)
	if err := checkTransaction(tx.Wire, want); err != nil {
		t.Fatal(err)
	}
	spl := want
	spl.program = sol.TokenProgramID
	if err := checkTransaction(tx.Wire, spl); !errors.Is(err, ErrShape) {
		t.Fatalf("a Token-2022 transfer passed as SPL Token's: %v", err)
	}
}

func TestBuildTransaction_Refuses(t *testing.T) {
	t.Parallel()
	w, s, f := newParty(t), newParty(t), newParty(t)
	c := choose(t, w, sponsored(request(s.pub, "1000"), f.pub))
	change := func(mutate func(*Choice)) Choice {
		x := c
		x.Splits = append([]Split(nil), c.Splits...)
		mutate(&x)
		return x
	}
	var many []map[string]any
	for range MaxSplits {
		many = append(many, map[string]any{"recipient": newParty(t).pub.String(), "amount": "1", "memo": strings.Repeat("m", 60)})
	}
	big := request(s.pub, "1000")
	details(big)["splits"] = many
	tooBig := choose(t, w, big)
	for _, tc := range []struct {
		name string
		c    Choice
		key  ed25519.PrivateKey
		bh   sol.Hash
		opts BuildOptions
		want error
	}{
		{"the fee payer is the wallet", change(func(x *Choice) { x.FeePayer = w.pub }), w.key, testBlockhash, BuildOptions{}, ErrFeePayerIsWallet},
		{"a choice not from Select", change(func(x *Choice) { x.selected = false }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"no blockhash", c, w.key, sol.Hash{}, BuildOptions{}, ErrShape},
		{"an unknown token program", change(func(x *Choice) { x.Token.Program = sol.MemoProgramID }), w.key, testBlockhash, BuildOptions{}, ErrUnknownTokenProgram},
		{"no token", change(func(x *Choice) { x.Token = solana.Token{} }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"compute unit limit over the cap", c, w.key, testBlockhash, BuildOptions{ComputeUnitLimit: MaxComputeUnitLimit + 1}, ErrShape},
		{"compute unit price over the cap", c, w.key, testBlockhash, BuildOptions{ComputeUnitPrice: MaxComputeUnitPrice + 1}, ErrShape},
		{"a nonce out of range", c, w.key, testBlockhash, BuildOptions{Nonce: nonce(NonceRange)}, ErrShape},
		{"a zero primary amount", change(func(x *Choice) { x.Primary, x.Amount = 0, 0 }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"amounts that do not add up", change(func(x *Choice) { x.Amount++ }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"the recipient is the wallet", change(func(x *Choice) { x.Recipient = w.pub }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"a split to the wallet", change(func(x *Choice) {
			x.Splits = []Split{{Recipient: w.pub, Amount: 1}}
			x.Amount++
		}), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"a split of zero", change(func(x *Choice) { x.Splits = []Split{{Recipient: f.pub, Amount: 0}} }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"an externalId over 566 bytes", change(func(x *Choice) { x.Charge.ExternalID = strings.Repeat("m", MaxMemoBytes+1) }), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"9 splits", change(func(x *Choice) {
			for range MaxSplits + 1 {
				x.Splits = append(x.Splits, Split{Recipient: f.pub, Amount: 1})
			}
			x.Amount += MaxSplits + 1
		}), w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"more than a packet", tooBig, w.key, testBlockhash, BuildOptions{}, ErrShape},
		{"a short key", c, w.key[:32], testBlockhash, BuildOptions{}, ErrInvalidKey},
	} {
		if _, err := BuildTransaction(context.Background(), tc.c, ownerOf(tc.key), signer.Plain(tc.key), tc.bh, tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	// The key never shows in an error.
	_, err := BuildTransaction(context.Background(), change(func(x *Choice) { x.FeePayer = w.pub }), ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{})
	for _, enc := range []string{base64.StdEncoding.EncodeToString(w.key), hex.EncodeToString(w.key), sol.PrivateKey(w.key).String()} {
		if strings.Contains(err.Error(), enc) {
			t.Fatal("key in error")
		}
	}
}

// checkTransaction refuses anything outside the shape the official server
// verifies or we meant, even when the wallet signed it: each tampered copy
// is re-signed and must fail.
func TestCheckTransaction_RefusesTampering(t *testing.T) {
	t.Parallel()
	w, s, f, a, b := newParty(t), newParty(t), newParty(t), newParty(t), newParty(t)
	r := sponsored(request(s.pub, "10000"), f.pub)
	r["externalId"] = "order-42"
	details(r)["splits"] = []map[string]any{
		{"recipient": a.pub.String(), "amount": "1500"},
		{"recipient": b.pub.String(), "amount": "500", "ataCreationRequired": true},
	}
	c := choose(t, w, r)
	tx, err := BuildTransaction(context.Background(), c, ownerOf(w.key), signer.Plain(w.key), testBlockhash, BuildOptions{Nonce: nonce(3)})
	if err != nil {
		t.Fatal(err)
	}
	// 0 price, 1 limit, 2 transfer to s, 3 memo, 4 transfer to a, 5 create b, 6 transfer to b
	want := expectationOf(c, w.pub, tx.ComputeUnitLimit, tx.ComputeUnitPrice, testBlockhash)
	if err := checkTransaction(tx.Wire, want); err != nil {
		t.Fatal(err)
	}
	resign := func(mutate func(*sol.Transaction)) []byte {
		// A decoded transaction's data aliases its bytes: decode a copy.
		d, err := sol.TransactionFromBytes(bytes.Clone(tx.Wire))
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
	setU64 := func(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }
	index := func(d *sol.Transaction, k sol.PublicKey) uint16 {
		for i, x := range d.Message.AccountKeys {
			if x.Equals(k) {
				return uint16(i)
			}
		}
		t.Fatalf("no account %s", k)
		return 0
	}
	for _, tc := range []struct {
		name, want string
		mutate     func(*sol.Transaction)
	}{
		{"the primary amount", "no TransferChecked of 8000", func(d *sol.Transaction) { setU64(d.Message.Instructions[2].Data, 1, 8001) }},
		{"a split's amount", "no TransferChecked of 1500", func(d *sol.Transaction) { setU64(d.Message.Instructions[4].Data, 1, 1499) }},
		{"decimals", "no TransferChecked of 8000", func(d *sol.Transaction) { d.Message.Instructions[2].Data[9] = 9 }},
		{"the price over the cap", "compute unit price 5000001", func(d *sol.Transaction) { setU64(d.Message.Instructions[0].Data, 1, MaxComputeUnitPrice+1) }},
		{"another limit", "compute unit limit", func(d *sol.Transaction) {
			binary.LittleEndian.PutUint32(d.Message.Instructions[1].Data[1:], tx.ComputeUnitLimit+1)
		}},
		{"the memo", "no memo \"order-42\"", func(d *sol.Transaction) { d.Message.Instructions[3].Data = []byte("order-43") }},
		{"no memo", "no memo \"order-42\"", func(d *sol.Transaction) {
			d.Message.Instructions = append(d.Message.Instructions[:3], d.Message.Instructions[4:]...)
		}},
		{"an extra memo", "is none of the payment's", func(d *sol.Transaction) {
			d.Message.Instructions = append(d.Message.Instructions, d.Message.Instructions[3])
		}},
		{"the price and limit swapped", "compute unit limit", func(d *sol.Transaction) {
			in := d.Message.Instructions
			in[0], in[1] = in[1], in[0]
		}},
		{"the transfer under Token-2022", "no TransferChecked of 8000", func(d *sol.Transaction) {
			d.Message.AccountKeys[d.Message.Instructions[2].ProgramIDIndex] = sol.Token2022ProgramID
		}},
		{"the fee payer as transfer authority", "the fee payer authorizes or funds a transfer", func(d *sol.Transaction) { d.Message.Instructions[2].Accounts[3] = 0 }},
		{"the recipient's account swapped with the source", "no TransferChecked of 8000", func(d *sol.Transaction) {
			ix := d.Message.Instructions[2]
			ix.Accounts[0], ix.Accounts[2] = ix.Accounts[2], ix.Accounts[0]
		}},
		{"no creation of the asked account", "no creation of split recipient", func(d *sol.Transaction) {
			d.Message.Instructions = append(d.Message.Instructions[:5], d.Message.Instructions[6:]...)
		}},
		{"the creation of the primary recipient's account", "account is not the charge's", func(d *sol.Transaction) {
			d.Message.AccountKeys = append(d.Message.AccountKeys, s.pub)
			ix := d.Message.Instructions[5]
			ix.Accounts[1], ix.Accounts[2] = index(d, tx.DestinationATA), index(d, s.pub)
		}},
		{"a creation paid by the wallet", "not paid by the fee payer", func(d *sol.Transaction) { d.Message.Instructions[5].Accounts[0] = index(d, w.pub) }},
		{"a creation that is not idempotent", "is not a CreateIdempotent", func(d *sol.Transaction) { d.Message.Instructions[5].Data = []byte{0} }},
		{"the blockhash", "wrong blockhash", func(d *sol.Transaction) { d.Message.RecentBlockhash = sol.Hash{1} }},
		{"a legacy message", "not a v0 message", func(d *sol.Transaction) { d.Message.SetVersion(sol.MessageVersionLegacy) }},
		{"the fee payer's slot signed", "signature slot is not empty", func(d *sol.Transaction) { d.Signatures[0] = sol.Signature{1} }},
		{"a foreign program", "calls program", func(d *sol.Transaction) {
			d.Message.Instructions = append(d.Message.Instructions, sol.CompiledInstruction{ProgramIDIndex: index(d, solana.DevnetUSDCMint)})
		}},
		{"another program", "no memo \"order-42\"", func(d *sol.Transaction) {
			d.Message.AccountKeys[d.Message.Instructions[3].ProgramIDIndex] = sol.SystemProgramID
		}},
	} {
		if err := checkTransaction(resign(tc.mutate), want); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	// A signature that does not verify.
	bad := bytes.Clone(tx.Wire)
	bad[1+64] ^= 1
	if err := checkTransaction(bad, want); !errors.Is(err, ErrShape) {
		t.Errorf("a bad signature: %v", err)
	}
	if err := checkTransaction(tx.Wire[:40], want); !errors.Is(err, ErrShape) {
		t.Errorf("truncated: %v", err)
	}
}

// Package chaintest sends money into wallets on the localnet from outside
// the service: a Payer is a keypair the service knows nothing of, funded
// with the localnet's cheat methods, that pays in each way a deposit can
// reach a Solana wallet (a token Transfer or TransferChecked to its USDC
// account, a transfer to another USDC account it owns, a transfer made
// by a program through a cross-program invocation, a System transfer of
// SOL). Deposit detection is tested against these real transactions.
//
// Every method builds the transaction, signs it with the payer's own key
// only, sends it, and returns its signature once it is confirmed; any
// failure fails the test. The payer pays the fees, and the rent of any
// account it creates. The localnet's slots must advance (any Start or
// Shared localnet; with StartSlots' long slots, the test must advance
// the chain itself, or confirmation never comes).
package chaintest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	associatedtokenaccount "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// USDCMint is the devnet USDC mint (6 decimals), which the localnet has.
var USDCMint = solana.DevnetUSDCMint

// TokenAccountSize is the size of an SPL Token account.
const TokenAccountSize = 165

// confirmTimeout bounds the wait for a transaction to be confirmed.
const confirmTimeout = 30 * time.Second

// Payer is a sender outside the service.
type Payer struct {
	Key sol.PrivateKey

	ln     *localnettest.Localnet
	client *solana.Client

	// mu makes a payer's sends one at a time, each on a blockhash newer
	// than the last one's: two equal payments would otherwise be the same
	// bytes, and the chain runs a signature once.
	mu   sync.Mutex
	last sol.Hash
}

// NewPayer makes a fresh keypair holding lamports and usdcMicros of
// devnet USDC in its associated token account, which exists even when
// usdcMicros is 0 (surfnet_setAccount, surfnet_setTokenAccount).
func NewPayer(t testing.TB, ln *localnettest.Localnet, usdcMicros, lamports uint64) *Payer {
	t.Helper()
	p := &Payer{
		Key:    sol.NewWallet().PrivateKey,
		ln:     ln,
		client: solana.NewClient(ln.URL, solana.Devnet, 10*time.Second),
	}
	ln.SetLamports(t, p.PublicKey().String(), lamports)
	ln.SetTokenBalance(t, p.PublicKey().String(), USDCMint.String(), usdcMicros)
	return p
}

// PublicKey is the payer's address.
func (p *Payer) PublicKey() sol.PublicKey { return p.Key.PublicKey() }

// USDCAccount is the payer's associated USDC account, which every USDC
// payment is from.
func (p *Payer) USDCAccount() sol.PublicKey { return USDCAccount(p.PublicKey()) }

// USDCAccount is owner's associated USDC account (devnet mint).
func USDCAccount(owner sol.PublicKey) sol.PublicKey {
	ata, _, err := sol.FindAssociatedTokenAddress(owner, USDCMint)
	if err != nil {
		panic(err) // only for an owner no ATA can be derived for, which no key is
	}
	return ata
}

// TransferUSDC pays micros of USDC to owner to with SPL Token's Transfer
// (instruction 3; no mint, no decimals), from the payer's USDC account
// to to's associated USDC account.
//
// The transaction: [ATA CreateIdempotent(payer, to, USDC) when to has no
// USDC account yet], Token Transfer(payer's ATA → to's ATA, authority
// payer), both top level. CreateIdempotent's own work is its inner
// instructions (Token GetAccountDataSize, System CreateAccount, Token
// InitializeImmutableOwner and InitializeAccount3); none moves tokens.
// Changed: both USDC accounts' amounts (pre/postTokenBalances), the
// payer's lamports (fee, and rent when it creates the account).
func (p *Payer) TransferUSDC(t testing.TB, to sol.PublicKey, micros uint64) string {
	t.Helper()
	ixs := p.createRecipientAccount(t, to)
	ixs = append(ixs, token.NewTransferInstruction(micros, p.USDCAccount(), USDCAccount(to), p.PublicKey(), nil).Build())
	return p.send(t, "TransferUSDC", ixs)
}

// TransferCheckedUSDC pays micros of USDC to owner to with SPL Token's
// TransferChecked (instruction 12: with the mint and its 6 decimals),
// from the payer's USDC account to to's associated USDC account: what
// wallets, and the service itself, send.
//
// The transaction: [ATA CreateIdempotent(payer, to, USDC) when to has no
// USDC account yet], Token TransferChecked(payer's ATA, USDC mint → to's
// ATA, authority payer), all top level. Changed: both USDC accounts'
// amounts, the payer's lamports.
func (p *Payer) TransferCheckedUSDC(t testing.TB, to sol.PublicKey, micros uint64) string {
	t.Helper()
	ixs := p.createRecipientAccount(t, to)
	ixs = append(ixs, token.NewTransferCheckedInstruction(micros, money.Decimals, p.USDCAccount(), USDCMint, USDCAccount(to), p.PublicKey(), nil).Build())
	return p.send(t, "TransferCheckedUSDC", ixs)
}

// TransferUSDCToAccount pays micros of USDC into tokenAccount, any USDC
// token account (one NewTokenAccount made, not an associated one), with
// SPL Token's Transfer (instruction 3). The wallet that owns tokenAccount
// appears nowhere in the transaction: only the account's data names it
// (and the token balances' owner field).
//
// The transaction: Token Transfer(payer's ATA → tokenAccount, authority
// payer), top level, alone. Changed: both accounts' amounts, the payer's
// lamports.
func (p *Payer) TransferUSDCToAccount(t testing.TB, tokenAccount sol.PublicKey, micros uint64) string {
	t.Helper()
	ix := token.NewTransferInstruction(micros, p.USDCAccount(), tokenAccount, p.PublicKey(), nil).Build()
	return p.send(t, "TransferUSDCToAccount", []sol.Instruction{ix})
}

// NewTokenAccount makes a USDC token account owned by owner that is not
// owner's associated one (a fresh keypair's address), the payer paying
// its rent, and returns its address. A wallet can have any number of
// these beside its associated account, and USDC sent to them is its.
//
// The transaction: System CreateAccount(payer → new account, rent-exempt
// lamports for 165 bytes, owner the Token program), Token
// InitializeAccount3(new account, USDC mint, owner), both top level,
// signed by the payer and the new account's throwaway key. Changed: the
// payer's lamports, the new account (balance 0).
func (p *Payer) NewTokenAccount(t testing.TB, owner sol.PublicKey) sol.PublicKey {
	t.Helper()
	account := sol.NewWallet().PrivateKey
	var rent uint64
	p.ln.Call(t, &rent, "getMinimumBalanceForRentExemption", TokenAccountSize)
	ixs := []sol.Instruction{
		system.NewCreateAccountInstruction(rent, TokenAccountSize, sol.TokenProgramID, p.PublicKey(), account.PublicKey()).Build(),
		token.NewInitializeAccount3Instruction(owner, account.PublicKey(), USDCMint).Build(),
	}
	p.send(t, "NewTokenAccount", ixs, account)
	return account.PublicKey()
}

// TransferUSDCByCPI pays micros of USDC to owner to's associated USDC
// account through a cross-program invocation: the transfer is an inner
// instruction, and the transaction has no top-level token instruction.
//
// No program the localnet ships can do that for a third party. The
// Associated Token Account program's RecoverNested is the only one whose
// CPI moves tokens, and it moves them into the account of its signing
// wallet, derived from the signer's key: a deposit to a service wallet
// that way would need the service wallet's own signature. So the payer
// goes through the forwarder, a tiny program this package puts on the
// localnet (forwarder.go), as payments made by other programs (a DEX
// swap paying out to a recipient, a payment router, a multisig or escrow
// releasing funds) reach a wallet on mainnet.
//
// The transaction: [ATA CreateIdempotent(payer, to, USDC) when to has no
// USDC account yet], then one instruction of the forwarder program
// (accounts: payer's ATA, to's ATA, payer as signer, the Token program;
// data: Transfer's), whose inner instruction is Token Transfer
// (instruction 3) of micros from the payer's ATA to to's ATA, authority
// the payer (meta.innerInstructions, stack height 2). Changed: both USDC
// accounts' amounts, the payer's lamports.
func (p *Payer) TransferUSDCByCPI(t testing.TB, to sol.PublicKey, micros uint64) string {
	t.Helper()
	DeployForwarder(t, p.ln)
	ixs := p.createRecipientAccount(t, to)
	ixs = append(ixs, forward(t, token.NewTransferInstruction(micros, p.USDCAccount(), USDCAccount(to), p.PublicKey(), nil).Build()))
	return p.send(t, "TransferUSDCByCPI", ixs)
}

// TransferCheckedUSDCByCPI is TransferUSDCByCPI with TransferChecked
// (instruction 12: with the mint and its 6 decimals) as the inner
// instruction.
func (p *Payer) TransferCheckedUSDCByCPI(t testing.TB, to sol.PublicKey, micros uint64) string {
	t.Helper()
	DeployForwarder(t, p.ln)
	ixs := p.createRecipientAccount(t, to)
	ixs = append(ixs, forward(t, token.NewTransferCheckedInstruction(micros, money.Decimals, p.USDCAccount(), USDCMint, USDCAccount(to), p.PublicKey(), nil).Build()))
	return p.send(t, "TransferCheckedUSDCByCPI", ixs)
}

// TransferSOL pays lamports to to with the System program's Transfer.
//
// The transaction: System Transfer(payer → to), top level, alone.
// Changed: the lamports of the payer (amount and fee) and of to (amount);
// to needs no account beforehand (a transfer of at least the rent-exempt
// minimum, 890,880 lamports, creates it; less into a missing account
// fails).
func (p *Payer) TransferSOL(t testing.TB, to sol.PublicKey, lamports uint64) string {
	t.Helper()
	ix := system.NewTransferInstruction(lamports, p.PublicKey(), to).Build()
	return p.send(t, "TransferSOL", []sol.Instruction{ix})
}

// TransferSOLByCPI pays lamports to to through a cross-program
// invocation: the forwarder's one instruction, whose inner instruction
// is the System Transfer(payer → to). Changed: as TransferSOL.
func (p *Payer) TransferSOLByCPI(t testing.TB, to sol.PublicKey, lamports uint64) string {
	t.Helper()
	DeployForwarder(t, p.ln)
	ix := forward(t, system.NewTransferInstruction(lamports, p.PublicKey(), to).Build())
	return p.send(t, "TransferSOLByCPI", []sol.Instruction{ix})
}

// createRecipientAccount is the instruction that makes to's USDC account,
// paid by the payer, when it does not exist yet; none when it does.
func (p *Payer) createRecipientAccount(t testing.TB, to sol.PublicKey) []sol.Instruction {
	t.Helper()
	exists, err := p.client.TokenAccountExists(context.Background(), to)
	if err != nil {
		t.Fatalf("chaintest: does %s have a USDC account: %v", to, err)
	}
	if exists {
		return nil
	}
	return []sol.Instruction{associatedtokenaccount.NewCreateIdempotentInstruction(p.PublicKey(), to, USDCMint).Build()}
}

// send signs ixs with the payer (the fee payer) and signers, sends them
// with preflight, and waits until the transaction is confirmed.
func (p *Payer) send(t testing.TB, what string, ixs []sol.Instruction, signers ...sol.PrivateKey) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	bh := p.freshBlockhash(t, what)
	raw := p.sign(t, what, ixs, bh, signers...)
	sig, err := p.client.Broadcast(context.Background(), raw)
	if err != nil {
		var pe *solana.PreflightError
		if errors.As(err, &pe) {
			t.Fatalf("chaintest %s: refused: %v\n%s", what, err, strings.Join(pe.Logs, "\n"))
		}
		t.Fatalf("chaintest %s: send: %v", what, err)
	}
	p.last = bh
	p.waitConfirmed(t, what, sig)
	return sig.String()
}

// sign makes the transaction of ixs over blockhash bh, fee payer the
// payer, signed by the payer and signers, in wire bytes.
func (p *Payer) sign(t testing.TB, what string, ixs []sol.Instruction, bh sol.Hash, signers ...sol.PrivateKey) []byte {
	t.Helper()
	tx, err := sol.NewTransaction(ixs, bh, sol.TransactionPayer(p.PublicKey()))
	if err != nil {
		t.Fatalf("chaintest %s: build: %v", what, err)
	}
	keys := append([]sol.PrivateKey{p.Key}, signers...)
	if _, err := tx.Sign(func(pub sol.PublicKey) *sol.PrivateKey {
		for i := range keys {
			if keys[i].PublicKey().Equals(pub) {
				return &keys[i]
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("chaintest %s: sign: %v", what, err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatalf("chaintest %s: encode: %v", what, err)
	}
	return raw
}

// freshBlockhash is the latest blockhash, waiting for a newer one than
// the payer's last send used.
func (p *Payer) freshBlockhash(t testing.TB, what string) sol.Hash {
	t.Helper()
	deadline := time.Now().Add(confirmTimeout)
	for {
		bh, err := p.client.LatestBlockhash(context.Background())
		if err != nil {
			t.Fatalf("chaintest %s: blockhash: %v", what, err)
		}
		if bh.Hash != p.last {
			return bh.Hash
		}
		if time.Now().After(deadline) {
			t.Fatalf("chaintest %s: no new blockhash in %v: is the chain advancing?", what, confirmTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitConfirmed waits until sig is confirmed, failing the test if it
// failed on chain or is not confirmed in time.
func (p *Payer) waitConfirmed(t testing.TB, what string, sig sol.Signature) {
	t.Helper()
	deadline := time.Now().Add(confirmTimeout)
	for {
		st, err := p.client.SignatureStatuses(context.Background(), false, []sol.Signature{sig})
		if err == nil {
			if st[0].Err != "" {
				t.Fatalf("chaintest %s: transaction %s failed: %s", what, sig, st[0].Err)
			}
			if st[0].Confirmed {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("chaintest %s: transaction %s not confirmed in %v (last error: %v)", what, sig, confirmTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package solana

import (
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	associatedtokenaccount "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/agentwallet/agentwallet/internal/money"
)

// USDC is the network's USDC as a Token: Circle's mint, on the SPL Token
// program, 6 decimals.
func (n Network) USDC() Token {
	return Token{Symbol: "USDC", Mint: n.USDCMint(), Program: sol.TokenProgramID, Decimals: money.Decimals}
}

// IsZero reports whether t names no token (a Transfer's zero Token means
// the network's USDC).
func (t Token) IsZero() bool { return t.Mint.IsZero() }

// Is2022 reports whether t is a Token-2022 mint, whose accounts may carry
// extensions (and cost more rent and compute).
func (t Token) Is2022() bool { return t.Program.Equals(sol.Token2022ProgramID) }

// name is how errors name t: its symbol, or its mint.
func (t Token) name() string {
	if t.Symbol != "" {
		return t.Symbol
	}
	return t.Mint.String()
}

// validate refuses a token no transfer can be built for: a mint of
// another program than SPL Token or Token-2022.
func (t Token) validate() error {
	if t.Mint.IsZero() {
		return fmt.Errorf("token %s: no mint", t.name())
	}
	if !t.Program.Equals(sol.TokenProgramID) && !t.Program.Equals(sol.Token2022ProgramID) {
		return fmt.Errorf("token %s: program %s is neither SPL Token nor Token-2022", t.name(), t.Program)
	}
	return nil
}

// tokenOf is the token t moves: its own, or the network's USDC.
func (t Transfer) tokenOf(network Network) Token {
	if t.Token.IsZero() {
		return network.USDC()
	}
	return t.Token
}

// accountOf is owner's associated token account of tk and its bump.
func accountOf(owner sol.PublicKey, tk Token) (sol.PublicKey, uint8, error) {
	return associatedTokenAddressOf(owner, tk.Program, tk.Mint)
}

// createIdempotentInstruction makes owner's associated account of tk if
// it is missing, payer funding it, naming tk's program (the ATA program
// refuses a Token-2022 mint under SPL Token).
func createIdempotentInstruction(payer, owner sol.PublicKey, tk Token) sol.Instruction {
	return associatedtokenaccount.NewCreateIdempotentInstructionBuilder().
		SetPayer(payer).SetWallet(owner).SetMint(tk.Mint).SetTokenProgram(tk.Program).Build()
}

// transferCheckedInstruction moves amount base units of tk from src to
// dst, authority owner. SPL Token and Token-2022 share TransferChecked's
// layout (tag 12, amount, decimals; source, mint, destination,
// authority): solana-go's SPL Token builder makes it, re-targeted at tk's
// program.
func transferCheckedInstruction(tk Token, amount uint64, src, dst, owner sol.PublicKey) (*sol.GenericInstruction, error) {
	ix := token.NewTransferCheckedInstruction(amount, tk.Decimals, src, tk.Mint, dst, owner, nil).Build()
	data, err := ix.Data()
	if err != nil {
		return nil, fmt.Errorf("transfer: %w", err)
	}
	return sol.NewInstruction(tk.Program, ix.Accounts(), data), nil
}

package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// recoverWallet moves a wallet's money to an address with the service
// stopped: `recover --wallet ID --to ADDRESS --operator NAME --reason TEXT
// [--asset SYMBOL] [--fee-payer FILE]`: every asset of its network (the
// asset table, ASSETS included), then its SOL; with --asset, that one
// alone. It needs DATABASE_URL, the signer's settings (WALLET_MASTER_KEY,
// PKCS11_*, …) and the wallet's network's RPC URL; no api, no Redis. Who
// runs it and why are required: they are recorded, with the wallet's
// freeze, before anything is signed.
func recoverWallet(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	fs := flag.NewFlagSet("recover", flag.ContinueOnError)
	walletID := fs.String("wallet", "", "the wallet's id")
	toAddr := fs.String("to", "", "the address that receives the wallet's money")
	only := fs.String("asset", "", "move this asset alone (a symbol of the network's assets, or SOL); default: every asset, then SOL")
	operator := fs.String("operator", "", "who runs the recovery (required; recorded in the wallet's audit log)")
	reason := fs.String("reason", "", "why the wallet's money is moved out (required; recorded in the wallet's audit log)")
	feePayerFile := fs.String("fee-payer", "", "a keypair file (Solana CLI JSON) that pays the fee; default: the wallet pays")
	if err := fs.Parse(args); err != nil {
		return err
	}
	in := custody.Intent{Operator: strings.TrimSpace(*operator), Reason: strings.TrimSpace(*reason), Asset: strings.TrimSpace(*only)}
	if in.Operator == "" {
		return errors.New("--operator is required: the name of the person running the recovery, recorded in the wallet's audit log")
	}
	if in.Reason == "" {
		return errors.New("--reason is required: why the wallet's money is moved out, recorded in the wallet's audit log")
	}
	id, err := uuid.Parse(*walletID)
	if err != nil {
		return fmt.Errorf("--wallet: want the wallet's id: %w", err)
	}
	to, err := sol.PublicKeyFromBase58(*toAddr)
	if err != nil {
		return fmt.Errorf("--to: want a Solana address: %w", err)
	}
	op, err := openOperator(ctx, getenv)
	if err != nil {
		return err
	}
	defer op.close()
	var network solana.Network
	if err := op.db.NewRaw(`SELECT a.network FROM wallets w JOIN accounts a ON a.id = w.account_id WHERE w.id = ?`, id).Scan(ctx, &network); err != nil {
		return fmt.Errorf("wallet %s: %w", id, err)
	}
	// As the worker: nothing is signed for a node of another chain.
	client := op.cfg.Client(network)
	if err := client.VerifyChain(ctx); err != nil {
		return err
	}
	// As the worker: a mint whose program or decimals differ from the
	// table would build transfers the chain refuses.
	if err := op.cfg.Assets.Verify(ctx, network, client); err != nil {
		return err
	}
	var tokens []solana.Token
	for _, a := range op.cfg.Assets.Of(network) {
		tokens = append(tokens, a.Token())
	}
	r := &custody.Recovery{DB: op.db, Signer: op.set, Client: client, Assets: tokens}
	if *feePayerFile != "" {
		key, err := readKeypair(*feePayerFile)
		if err != nil {
			return fmt.Errorf("--fee-payer: %w", err)
		}
		r.FeePayer, r.FeePayerSign = sol.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)), signer.Plain(key)
	}
	done, err := r.Run(ctx, id, to, in)
	// What moved is said also when the run stops short: the next run
	// finishes the rest.
	for _, m := range done.Moved {
		// m.To is an interrupted run's address when its transaction is
		// one that landed.
		fmt.Fprintf(stdout, "moved %s %s from wallet %s (%s) to %s: %s\n", m.Amount(), m.Asset, id, m.From, m.To, m.Signature)
	}
	for _, l := range done.Left {
		fmt.Fprintf(stdout, "left in the wallet: %s\n", l)
	}
	if err != nil {
		return err
	}
	if len(done.Left) > 0 {
		fmt.Fprintf(stdout, "the wallet %s is frozen, %d holdings left in it (above)\n", id, len(done.Left))
		return nil
	}
	fmt.Fprintf(stdout, "the wallet %s is frozen\n", id)
	return nil
}

// readKeypair reads a Solana CLI keypair file: a JSON array of the 64
// bytes of an ed25519 private key.
func readKeypair(path string) (ed25519.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b []byte
	var ints []int
	if err := json.Unmarshal(raw, &ints); err != nil {
		return nil, fmt.Errorf("not a keypair file (a JSON array of 64 numbers): %w", err)
	}
	for _, v := range ints {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("not a keypair file: %d is no byte", v)
		}
		b = append(b, byte(v))
	}
	if len(b) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("not a keypair file: %d bytes, want 64", len(b))
	}
	key := ed25519.PrivateKey(b)
	if !ed25519.NewKeyFromSeed(key.Seed()).Public().(ed25519.PublicKey).Equal(key.Public()) {
		return nil, fmt.Errorf("not a keypair file: the public half does not match")
	}
	return key, nil
}

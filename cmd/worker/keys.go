package main

import (
	"context"
	"flag"

	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/worker"
)

// keys runs `worker keys rotate|import`: operator commands over the
// database and the signers, with no api or Redis needed.
func keys(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("keys: want a subcommand (rotate, import)")
	}
	switch args[0] {
	case "rotate":
		return rotate(ctx, getenv, stdout)
	case "import":
		return importKeys(ctx, args[1:], getenv, stdout)
	}
	return fmt.Errorf("keys: unknown subcommand %q (try: rotate, import)", args[0])
}

// rotate re-seals every envelope secret to the first key of
// WALLET_MASTER_KEY; once it reports none left under another key, the
// others can be removed from the workers' environment.
func rotate(ctx context.Context, getenv config.Getenv, stdout io.Writer) error {
	common, err := config.LoadCommon(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	ks, err := signer.NewKeystore(getenv("WALLET_MASTER_KEY"))
	if err != nil {
		return fmt.Errorf("WALLET_MASTER_KEY: %w", err)
	}
	db, err := postgres.Open(common.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := custody.Rotate(ctx, db, ks)
	fmt.Fprintf(stdout, "re-sealed to %s: %d wallet secrets, %d fee payer secrets, %d webhook secrets\n",
		ks.Current(), r.Wallets, r.FeePayers, r.WebhookSecrets)
	if err != nil {
		return fmt.Errorf("rotation stopped (run it again to go on): %w", err)
	}
	left, err := worker.SealedKeyIDs(ctx, db)
	if err != nil {
		return err
	}
	if len(left) == 1 && left[0] == ks.Current() || len(left) == 0 {
		fmt.Fprintf(stdout, "every secret is sealed to %s: the other master keys may be removed from WALLET_MASTER_KEY\n", ks.Current())
		return nil
	}
	// Sealed meanwhile by an api still configured with an old public key.
	fmt.Fprintf(stdout, "secrets are still sealed to %v: set every api's WALLET_PUBLIC_KEY to the new key and run this again\n", left)
	return nil
}

// importKeys moves envelope wallets into an HSM keeping their addresses:
// `keys import --to pkcs11 [--wallet ID]` (every local wallet without
// --wallet). A wallet's sealed secret is dropped only once the token
// signs for it; a run stopped half-way is finished by the next.
func importKeys(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	fs := flag.NewFlagSet("keys import", flag.ContinueOnError)
	to := fs.String("to", "", "the signer to move keys into (pkcs11)")
	one := fs.String("wallet", "", "move only this wallet (its id)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	backend, err := signer.ParseBackend(*to)
	if err != nil || backend == signer.Local {
		return fmt.Errorf("keys import: --to names the signer to move keys into (pkcs11)")
	}
	op, err := openOperator(ctx, getenv)
	if err != nil {
		return err
	}
	defer op.close()
	imp, err := custody.Importer(op.set, backend)
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	if *one != "" {
		id, err := uuid.Parse(*one)
		if err != nil {
			return fmt.Errorf("--wallet: %w", err)
		}
		ids = []uuid.UUID{id}
	} else if ids, err = custody.LocalWallets(ctx, op.db); err != nil {
		return err
	}
	for i, id := range ids {
		if err := custody.Move(ctx, op.db, op.ks, imp, id); err != nil {
			return fmt.Errorf("%d of %d moved: %w", i, len(ids), err)
		}
		fmt.Fprintf(stdout, "moved wallet %s into %s\n", id, backend)
	}
	fmt.Fprintf(stdout, "%d wallets moved into %s\n", len(ids), backend)
	return nil
}

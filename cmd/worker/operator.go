package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// operator is what the offline commands (keys import, recover) work
// with: the worker's configuration, its keystore and signers, and the
// database; no Redis, no api.
type operator struct {
	cfg   config.Worker
	ks    *signer.Keystore
	set   *signer.Set
	db    *bun.DB
	close func()
}

func openOperator(ctx context.Context, getenv config.Getenv) (*operator, error) {
	cfg, err := config.LoadWorker(getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration:\n%w", err)
	}
	ks, err := signer.NewKeystore(cfg.WalletMasterKey.Reveal())
	if err != nil {
		return nil, fmt.Errorf("WALLET_MASTER_KEY: %w", err)
	}
	db, err := postgres.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	set, closeSigners, err := custody.Open(ctx, cfg.Signers, ks, slog.New(slog.DiscardHandler))
	if err != nil {
		db.Close()
		return nil, err
	}
	return &operator{cfg: cfg, ks: ks, set: set, db: db, close: func() { closeSigners(); db.Close() }}, nil
}

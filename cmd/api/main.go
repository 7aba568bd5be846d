// Command api serves the public REST API and the operator routes, and
// carries the one-shot commands that manage the database and accounts.
//
//	api [serve]                          serve HTTP (default)
//	api migrate up|down|status|unlock    manage the schema
//	api bootstrap --network devnet       create an account and print its key
//	api openapi --dir openapi            write the OpenAPI documents
//	api keys create --account ID         create an admin key (may approve)
//	api audit verify [--account ID]      check the audit log's hash chains from their checkpoints
//	                 [--full]            or from their first entries
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	// The tz database inside the binary: wallet policies name IANA zones
	// (active hours), and a deploy image may have no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/mcpserver"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/pprofserver"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/migrations"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, nil)
	case "migrate":
		return migrate(ctx, args, getenv, stdout)
	case "bootstrap":
		return bootstrap(ctx, args, getenv, stdout)
	case "openapi":
		return writeOpenAPI(args)
	case "audit":
		return auditCmd(ctx, args, getenv, stdout)
	case "keys":
		return keysCmd(ctx, args, getenv, stdout)
	case "users":
		return usersCmd(ctx, args, getenv, stdout)
	case "mcp":
		return mcpCmd(ctx, getenv)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: api [serve | migrate up|down|status|unlock | bootstrap --network devnet|mainnet [--quiet] | openapi --dir DIR | keys create --account ID [--quiet] | users add|remove --account ID --address ADDR [--role owner|approver|viewer] | mcp | audit verify [--account ID] [--full]]")
		return nil
	}
	return fmt.Errorf("unknown command %q (try: serve, migrate, bootstrap, openapi, keys, users, mcp, audit)", cmd)
}

func newLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// serve runs the HTTP server until ctx ends, then drains it. ready, when
// set, receives the bound address (tests listen on port 0).
func serve(ctx context.Context, getenv config.Getenv, ready chan<- string) error {
	cfg, err := config.LoadAPI(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	log := newLogger(cfg.LogLevel)
	redis.SetLogger(tasks.Logger{L: log}) // go-redis logs in JSON too
	if cfg.PprofAddr != "" {
		if _, err := pprofserver.Start(ctx, cfg.PprofAddr, log); err != nil {
			return fmt.Errorf("PPROF_ADDR: %w", err)
		}
	}

	db, err := postgres.Open(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()

	rdb, asynqOpt, err := cfg.Redis.Open(httpapi.RedisTimeout)
	if err != nil {
		return err
	}
	defer rdb.Close()

	sealer, err := signer.NewSealer(cfg.WalletPublicKey)
	if err != nil {
		return fmt.Errorf("WALLET_PUBLIC_KEY: %w", err)
	}
	// Keys kept in an HSM or a KMS are made by a worker, which holds the
	// credentials this process never does.
	var keys signer.Maker
	if cfg.WalletSigner != signer.Local {
		keys = &keymaker.Client{DB: db, Redis: rdb, Backend: cfg.WalletSigner}
	}
	// Approved exports are sealed by a worker, which holds the master key.
	exports := &keymaker.Client{DB: db, Redis: rdb}
	// Balance reads of a network whose node is of another chain answer
	// 503 (the API serves the other network meanwhile).
	clients := solana.Clients{}
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		c := cfg.Client(n)
		if err := c.VerifyChain(ctx); err != nil {
			log.Error("no Solana node of the network is verified; its balances answer 503 until one is", "network", n, "err", err)
		}
		for _, h := range c.Health() {
			if !h.Up {
				log.Warn("a Solana node is not used for now", "network", h.Network, "node", h.Node, "state", h.State, "err", h.Error)
			}
		}
		go c.WatchChain(ctx, 30*time.Second, log, func(err error) {
			log.Error("a Solana node is of the wrong chain and is not used (with no other node, the network's balances answer 503)", "network", n, "err", err)
		})
		clients[n] = c
	}

	// Each asset's mint facts (an issuer's powers, how its amounts read)
	// for GET /assets: read now, then kept fresh; a node that does not
	// answer yet leaves them null until it does.
	facts := asset.NewBook(cfg.Solana.Assets, map[solana.Network]asset.Mints{solana.Devnet: clients[solana.Devnet], solana.Mainnet: clients[solana.Mainnet]})
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := facts.Refresh(rctx, n); err != nil {
			log.Warn("the network's asset mints could not be read; GET /assets shows their facts as null until they are", "network", n, "err", err)
		}
		cancel()
	}
	go facts.Run(ctx, assetFactsEvery, log)

	var faucet httpapi.Faucet // test funds exist only on a local chain
	if cfg.Solana.LocalChain {
		faucet = clients
	}
	// Shutdown waits for requests to end; the event streams end when it
	// starts (their pages reconnect to another instance).
	draining := make(chan struct{})
	handler, closeOps := httpapi.New(httpapi.Deps{
		DB: db, Redis: rdb, Sealer: sealer, Keys: keys, Exports: exports, Balances: clients, Assets: cfg.Solana.Assets, AssetFacts: facts, Log: log, SendWait: cfg.SendTimeout,
		WebhookAllowPrivate: cfg.Webhooks.AllowPrivate, SlackSigningSecret: cfg.SlackSigningSecret.Reveal(),
		RateLimits: &ratelimit.Limits{Read: cfg.RateLimitRead, Write: cfg.RateLimitWrite, Send: cfg.RateLimitSend, Anonymous: cfg.RateLimitAnonymous},
		MaxWallets: cfg.MaxWallets, MaxWebhookEndpoints: cfg.MaxWebhookEndpoints, DashboardOrigin: cfg.Webhooks.DashboardOrigin,
		PayPreference:      cfg.PayPreference,
		MaxWalletsByAgents: cfg.MaxWalletsByAgents, MaxKeysByAgents: cfg.MaxKeysByAgents,
		TrustedProxies: cfg.TrustedProxies, Faucet: faucet, FeePayerDailyBudget: cfg.FeePayerDailyBudget,
		Ops:          httpapi.OpsConfig{Username: cfg.OpsUsername, Password: cfg.OpsPassword.Reveal(), RedisConnOpt: asynqOpt},
		EventStreams: httpapi.EventStreams{PerSession: cfg.EventStreamsPerSession, PerPerson: cfg.EventStreamsPerPerson, PerAccount: cfg.EventStreamsPerAccount},
		Draining:     draining,
	})
	defer closeOps()

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { close(draining) })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("api listening", "addr", ln.Addr().String(), "docs", "http://"+ln.Addr().String()+httpapi.Prefix+"/docs")
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("api shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Out of time: cut the remaining connections before the database
		// and Redis close under them.
		srv.Close()
		<-errc
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func migrate(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: api migrate up|down|status|unlock")
	}
	cfg, err := config.LoadCommon(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	if args[0] == "up" {
		if err := postgres.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
			return fmt.Errorf("create database: %w", err)
		}
	}
	db, err := postgres.Open(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := migrations.NewMigrator(db)
	if err != nil {
		return err
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migrations: %w", err)
	}
	switch args[0] {
	case "up":
		if err := m.Lock(ctx); err != nil {
			return fmt.Errorf("%w (if no migration is running, clear it with `api migrate unlock`)", err)
		}
		defer m.Unlock(context.Background())
		g, err := m.Migrate(ctx)
		if err != nil {
			return err
		}
		if g.IsZero() {
			fmt.Fprintln(stdout, "database is up to date")
		} else {
			fmt.Fprintf(stdout, "migrated to %s\n", g)
		}
	case "down":
		if err := m.Lock(ctx); err != nil {
			return fmt.Errorf("%w (if no migration is running, clear it with `api migrate unlock`)", err)
		}
		defer m.Unlock(context.Background())
		g, err := m.Rollback(ctx)
		if err != nil {
			return err
		}
		if g.IsZero() {
			fmt.Fprintln(stdout, "nothing to roll back")
		} else {
			fmt.Fprintf(stdout, "rolled back %s\n", g)
		}
	case "status":
		ms, err := m.MigrationsWithStatus(ctx)
		if err != nil {
			return err
		}
		for _, mig := range ms {
			state := "pending"
			if mig.IsApplied() {
				state = "applied"
			}
			fmt.Fprintf(stdout, "%s %s\n", mig.Name, state)
		}
	case "unlock":
		// A crash mid-migration leaves the lock row behind.
		if err := m.Unlock(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migration lock cleared")
	default:
		return fmt.Errorf("unknown migrate command %q (want up, down, status or unlock)", args[0])
	}
	return nil
}

func bootstrap(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	networkFlag := fs.String("network", "devnet", "network of the account: devnet or mainnet")
	quiet := fs.Bool("quiet", false, "print only the API key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	network, err := solana.ParseNetwork(*networkFlag)
	if err != nil {
		return err
	}
	db, err := openDB(getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	acct, err := auth.CreateAccount(ctx, tx, network)
	if err != nil {
		return err
	}
	key, secret, err := auth.CreateKey(ctx, tx, acct)
	if err != nil {
		return err
	}
	keyID := auth.KeyActorID(key.ID)
	if err := audit.Append(ctx, tx, audit.Entry{
		AccountID: acct.ID,
		At:        key.CreatedAt,
		Actor:     audit.System,
		Action:    audit.ActionKeyCreated,
		Target:    "key:" + keyID,
		Details:   map[string]any{"key_id": keyID, "prefix": key.Prefix, "role": key.Role, "via": "bootstrap"},
	}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if *quiet {
		fmt.Fprintln(stdout, secret)
		return nil
	}
	fmt.Fprintf(stdout, "account  %s (%s)\nkey id   %s\napi key  %s\n\nAn admin key: it may do everything, approve payments included. It is shown only once; keep it secret.\n",
		acct.ID, acct.Network, key.ID, secret)
	return nil
}

// keysCmd makes an admin key of an existing account: a second principal
// that may approve the payments other keys' sends parked.
func keysCmd(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: api keys create --account ID [--quiet]")
	}
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	accountFlag := fs.String("account", "", "the account's id (required)")
	quiet := fs.Bool("quiet", false, "print only the API key")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var acct auth.Account
	var key auth.APIKey
	var secret string
	err := inAccount(ctx, getenv, *accountFlag, func(ctx context.Context, tx bun.Tx, a auth.Account) error {
		var err error
		acct = a
		if key, secret, err = auth.CreateKey(ctx, tx, acct); err != nil {
			return err
		}
		keyID := auth.KeyActorID(key.ID)
		return audit.Append(ctx, tx, audit.Entry{
			AccountID: acct.ID,
			At:        key.CreatedAt,
			Actor:     audit.System,
			Action:    audit.ActionKeyCreated,
			Target:    "key:" + keyID,
			Details:   map[string]any{"key_id": keyID, "prefix": key.Prefix, "role": key.Role, "via": "api keys create"},
		})
	})
	if err != nil {
		return err
	}
	if *quiet {
		fmt.Fprintln(stdout, secret)
		return nil
	}
	fmt.Fprintf(stdout, "account  %s (%s)\nkey id   %s\napi key  %s\n\nAn admin key: it may do everything, approve payments included. It is shown only once; keep it secret.\n",
		acct.ID, acct.Network, auth.KeyActorID(key.ID), secret)
	return nil
}

// openDB opens DATABASE_URL for a one-shot command.
func openDB(getenv config.Getenv) (*bun.DB, error) {
	cfg, err := config.LoadCommon(getenv)
	if err != nil {
		return nil, fmt.Errorf("configuration:\n%w", err)
	}
	return postgres.Open(cfg.DatabaseURL)
}

// errChainBroken fails `api audit verify` (exit status 1) after it has
// named each broken chain's first bad entry.
// assetFactsEvery is how often the API reads its assets' mints again: an
// issuer's change (a delegate set, a multiplier moved) shows on GET
// /assets within it.
const assetFactsEvery = 5 * time.Minute

var errChainBroken = errors.New("audit log chain broken")

func auditCmd(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		return errors.New("usage: api audit verify [--account ID] [--full]")
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	accountFlag := fs.String("account", "", "verify only this account's chain (default: every account)")
	full := fs.Bool("full", false, "walk each chain from its first entry, trusting no checkpoint (finds entries edited behind the triggers before the checkpoint)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var account *uuid.UUID
	if *accountFlag != "" {
		id, err := uuid.Parse(*accountFlag)
		if err != nil {
			return fmt.Errorf("--account: %w", err)
		}
		account = &id
	}
	db, err := openDB(getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	rep, err := audit.Verify(ctx, db, account, *full)
	if err != nil {
		return err
	}
	for _, b := range rep.Breaks {
		fmt.Fprintln(stdout, "BROKEN", b)
	}
	fmt.Fprintf(stdout, "checked %d entries in %d account chain(s): %d broken\n", rep.Entries, rep.Accounts, len(rep.Breaks))
	if len(rep.Breaks) > 0 {
		return errChainBroken
	}
	return nil
}

func writeOpenAPI(args []string) error {
	fs := flag.NewFlagSet("openapi", flag.ContinueOnError)
	dir := fs.String("dir", "openapi", "directory to write openapi.yaml and openapi-3.0.yaml into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	v31, v30, err := httpapi.OpenAPIDocuments()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*dir, "openapi.yaml"), v31, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*dir, "openapi-3.0.yaml"), v30, 0o644)
}

// usersCmd adds a dashboard user to an account, or removes one (never the
// last owner): how the first owner of an account comes to be.
func usersCmd(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	const usage = "usage: api users add --account ID --address ADDR --role owner|approver|viewer | api users remove --account ID --address ADDR"
	if len(args) == 0 || (args[0] != "add" && args[0] != "remove") {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("users "+args[0], flag.ContinueOnError)
	accountFlag := fs.String("account", "", "the account's id (required)")
	address := fs.String("address", "", "the user's Solana address (required)")
	role := fs.String("role", "", "owner, approver or viewer (add)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var id uuid.UUID
	var revoked []auth.APIKey
	err := inAccount(ctx, getenv, *accountFlag, func(ctx context.Context, tx bun.Tx, a auth.Account) error {
		id = a.ID
		if args[0] == "add" {
			// The operator's hand: it may add an owner, and it is
			// announced like any other user.
			via := "api users add"
			_, err := httpapi.AddUser(ctx, tx, id, *address, auth.Role(*role), string(audit.System), &via)
			return err
		}
		via := "api users remove"
		var err error
		revoked, err = httpapi.RemoveUser(ctx, tx, id, *address, "system", &via)
		return err
	})
	if err != nil {
		return err
	}
	if args[0] == "add" {
		fmt.Fprintf(stdout, "%s is now %s of account %s: it signs in to the dashboard with that wallet.\n", *address, *role, id)
	} else {
		fmt.Fprintf(stdout, "%s is no longer a user of account %s; %d API key(s) it made (directly or through its keys) were revoked.\n", *address, id, len(revoked))
		for _, k := range revoked {
			fmt.Fprintf(stdout, "  revoked %s (%s…)\n", auth.KeyActorID(k.ID), k.Prefix)
		}
	}
	return nil
}

// inAccount runs fn in a transaction over the account named by flag (its
// id), which must exist.
func inAccount(ctx context.Context, getenv config.Getenv, flag string, fn func(context.Context, bun.Tx, auth.Account) error) error {
	id, err := uuid.Parse(flag)
	if err != nil {
		return fmt.Errorf("--account: %w", err)
	}
	db, err := openDB(getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var a auth.Account
		if err := tx.NewSelect().Model(&a).Where("id = ?", id).Scan(ctx); err != nil {
			return fmt.Errorf("account %s: %w", id, err)
		}
		return fn(ctx, tx, a)
	})
}

// mcpCmd serves the MCP tools on stdin/stdout for an MCP host, acting
// through the service at AGENTWALLET_API_URL (default
// http://127.0.0.1:8080) with the key in AGENTWALLET_API_KEY.
func mcpCmd(ctx context.Context, getenv config.Getenv) error {
	return mcpserver.RunStdio(ctx, getenv, "http://"+config.DefaultHTTPAddr)
}

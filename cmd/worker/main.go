// Command worker runs the asynq handlers: the only process that can open
// wallet secrets. `worker keygen` prints a new master key pair.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// The tz database inside the binary: wallet policies name IANA zones
	// (active hours), and a deploy image may have no /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/payment"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/pprofserver"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/tasks"
	"github.com/agentwallet/agentwallet/internal/webhook"
	"github.com/agentwallet/agentwallet/internal/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv config.Getenv, stdout io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "keygen":
		priv, pub, err := signer.GenerateMasterKey()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "WALLET_MASTER_KEY=%s\nWALLET_PUBLIC_KEY=%s\n", priv, pub)
		return nil
	case "serve":
		return serve(ctx, getenv)
	case "keys":
		return keys(ctx, args[1:], getenv, stdout)
	case "recover":
		return recoverWallet(ctx, args[1:], getenv, stdout)
	}
	return fmt.Errorf("unknown command %q (try: serve, keygen, keys rotate, keys import, recover)", cmd)
}

func serve(ctx context.Context, getenv config.Getenv) error {
	cfg, err := config.LoadWorker(getenv)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	redis.SetLogger(tasks.Logger{L: log}) // go-redis logs in JSON too
	if cfg.PprofAddr != "" {
		if _, err := pprofserver.Start(ctx, cfg.PprofAddr, log); err != nil {
			return fmt.Errorf("PPROF_ADDR: %w", err)
		}
	}

	ks, err := signer.NewKeystore(cfg.WalletMasterKey.Reveal())
	if err != nil {
		return fmt.Errorf("WALLET_MASTER_KEY: %w", err)
	}
	db, err := postgres.Open(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := worker.CheckKeystore(ctx, db, ks); err != nil {
		return err
	}
	signers, closeSigners, err := custody.Open(ctx, cfg.Signers, ks, log)
	if err != nil {
		return err
	}
	defer closeSigners()
	if err := worker.CheckSigners(ctx, db, signers); err != nil {
		return err
	}
	rdb, _, err := cfg.Redis.Open(0)
	if err != nil {
		return err
	}
	defer rdb.Close()
	// Keys made and exports sealed for the API, which holds no signer
	// credentials.
	keysCtx, stopKeys := context.WithCancel(context.Background())
	defer stopKeys()
	keyWork := &keymaker.Server{DB: db, Redis: rdb, Signers: signers, Seal: custody.Exporter(ks), Log: log}
	go keyWork.Run(keysCtx)

	// Each network's node must be of its network's chain before anything
	// is signed for it: a node of another chain refuses the start (and,
	// found later, stops the worker); one that does not answer yet is
	// verified as soon as it does, and signs nothing until then.
	ctx, wrongChain := context.WithCancelCause(ctx)
	defer wrongChain(nil)
	sealer := audit.NewSealer(db, audit.SealerEvery, log)
	sealCtx, stopSealing := context.WithCancel(context.Background())
	defer stopSealing()
	go sealer.Run(sealCtx)
	engine := &payment.Engine{DB: db, Redis: rdb, Signer: signers, Nodes: map[solana.Network]payment.Node{}, Fees: cfg.PriorityFees,
		MaxAttempts: cfg.SendMaxAttempts, Sealer: sealer, Assets: cfg.Solana.Assets, Log: log}
	deposits := &deposit.Watcher{DB: db, Nodes: map[solana.Network]*solana.Client{}, Assets: cfg.Assets, Log: log}
	for _, n := range []solana.Network{solana.Devnet, solana.Mainnet} {
		c := cfg.Client(n)
		deposits.Nodes[n] = c
		var wrong *solana.WrongChainError
		if err := c.VerifyChain(ctx); errors.As(err, &wrong) {
			return err
		} else if err != nil {
			log.Warn("no Solana node of the network answered getGenesisHash; nothing is signed for it until one does", "network", n, "err", err)
		} else if err := cfg.Assets.Verify(ctx, n, c); err != nil {
			// A mint of another program or other decimals than the table
			// says would build transfers the chain refuses, or move
			// amounts off by powers of ten: refuse to start.
			var mismatch *asset.MismatchError
			if errors.As(err, &mismatch) {
				return err
			}
			log.Warn("the network's asset mints could not be read", "network", n, "err", err)
		}
		logNodesDown(log, c)
		go c.WatchChain(ctx, chainCheckEvery, log, func(err error) { wrongChain(err) })
		engine.Nodes[n] = payment.NodeOf(c)
	}
	bhCtx, stopBlockhashes := context.WithCancel(context.Background())
	defer stopBlockhashes()
	engine.RunBlockhashes(bhCtx)

	var queues []string
	if cfg.Queues != "" {
		for _, q := range strings.Split(cfg.Queues, ",") {
			queues = append(queues, strings.TrimSpace(q))
		}
	}
	client := asynq.NewClientFromRedisClient(rdb)
	hooks := &worker.Webhooks{
		Deliverer:  &webhook.Deliverer{DB: db, Keys: ks, AllowPrivate: cfg.Webhooks.AllowPrivate, Log: log, DashboardOrigin: cfg.Webhooks.DashboardOrigin},
		Dispatcher: &webhook.Dispatcher{DB: db, Enqueue: worker.EnqueueDelivery(rdb), Log: log},
	}
	dispatchCtx, stopDispatch := context.WithCancel(context.Background())
	defer stopDispatch()
	go hooks.Dispatcher.Run(dispatchCtx, cfg.DatabaseURL)

	mux := worker.NewMux(worker.Deps{DB: db, Redis: rdb, Keystore: ks, Signers: signers, Log: log, Payments: engine, Deposits: deposits, Webhooks: hooks})
	stop, err := worker.Start(rdb, mux, worker.Options{
		Concurrency: cfg.Concurrency, Queues: queues, ShutdownTimeout: cfg.ShutdownTimeout, Log: log,
	})
	if err != nil {
		return err
	}
	// Settle what a previous run left pending (signed, perhaps never
	// broadcast) now rather than at the scheduler's next tick.
	if _, err := client.Enqueue(tasks.NewConfirmSweepTask()); err != nil && !tasks.IsDuplicate(err) {
		log.Warn("enqueue start-up confirmation sweep", "err", err)
	}
	log.Info("worker started", "concurrency", cfg.Concurrency, "queues", cfg.Queues)
	<-ctx.Done()
	log.Info("worker shutting down: finishing in-flight tasks", "timeout", cfg.ShutdownTimeout.String())
	stop() // stops fetching, waits for in-flight tasks up to ShutdownTimeout
	var wrong *solana.WrongChainError
	if err := context.Cause(ctx); errors.As(err, &wrong) {
		log.Error("stopped: a Solana node is of the wrong chain", "err", err)
		return err
	}
	return nil
}

// logNodesDown names the nodes not used yet: each is checked again, and
// used once it answers its network's genesis hash.
func logNodesDown(log *slog.Logger, c *solana.Client) {
	for _, h := range c.Health() {
		if !h.Up {
			log.Warn("a Solana node is not used for now", "network", h.Network, "node", h.Node, "state", h.State, "err", h.Error)
		}
	}
}

// chainCheckEvery is how often each node's genesis hash is checked again
// (a URL can come to reach another node).
const chainCheckEvery = 30 * time.Second

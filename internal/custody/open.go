package custody

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentwallet/agentwallet/internal/config"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/awskms"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
	"github.com/agentwallet/agentwallet/internal/signer/vault"
)

// retryEvery is how often a keeper that could not start is tried again.
const retryEvery = 10 * time.Second

// Open builds a worker's signers: the envelope keystore and a keeper for
// each backend configured. A keeper that cannot start now (a token absent,
// a wrong PIN) does not stop the worker: its wallets answer 503 until it
// starts, tried again every 10 s, except after a refused PIN, which only
// a restart with another PIN retries (a real token locks its PIN after a
// few wrong tries). A configuration the binary cannot serve (PKCS#11 in a
// build without it) is an error. close releases the keepers.
func Open(ctx context.Context, cfg config.Signers, ks *signer.Keystore, log *slog.Logger) (set *signer.Set, close func(), err error) {
	set = &signer.Set{Local: ks, Keepers: map[signer.Backend]signer.Keeper{}}
	var closers []func()
	close = func() {
		for _, c := range closers {
			c()
		}
	}
	for _, b := range []signer.Backend{signer.PKCS11, signer.Vault, signer.AWSKMS} {
		if !cfg.Configured(b) {
			continue
		}
		start := starter(ctx, cfg, b)
		k, err := start()
		if errors.Is(err, pkcs11.ErrNotBuilt) {
			close()
			return nil, nil, err
		}
		if err != nil {
			log.Error("signer not available; its wallets answer 503 until it is", "backend", b, "err", err)
			k = &pending{backend: b, start: start, err: err, at: time.Now(), log: log}
		}
		set.Keepers[b] = k
		closers = append(closers, func() {
			if c, ok := set.Keepers[b].(interface{ Close() error }); ok {
				_ = c.Close()
			}
		})
	}
	return set, close, nil
}

// starter makes backend b's keeper from cfg.
func starter(ctx context.Context, cfg config.Signers, b signer.Backend) func() (signer.Keeper, error) {
	switch b {
	case signer.PKCS11:
		return func() (signer.Keeper, error) {
			return pkcs11.New(pkcs11.Config{Module: cfg.PKCS11.Module, TokenLabel: cfg.PKCS11.TokenLabel,
				PIN: cfg.PKCS11.PIN.Reveal(), Sessions: cfg.PKCS11.Sessions})
		}
	case signer.Vault:
		return func() (signer.Keeper, error) {
			return vault.New(vault.Config{Address: cfg.Vault.Addr, Token: cfg.Vault.Token.Reveal(),
				Mount: cfg.Vault.Mount, Namespace: cfg.Vault.Namespace})
		}
	case signer.AWSKMS:
		return func() (signer.Keeper, error) {
			return awskms.New(ctx, awskms.Config{Region: cfg.AWSKMS.Region, Endpoint: cfg.AWSKMS.Endpoint,
				AliasPrefix: cfg.AWSKMS.AliasPrefix})
		}
	}
	return func() (signer.Keeper, error) {
		return nil, &signer.UnavailableError{Backend: b, Reason: "this build has no " + string(b) + " signer"}
	}
}

// pending is a keeper that could not start: every call answers its error,
// and tries to start it again at most every retryEvery (never after a
// refused PIN).
type pending struct {
	backend signer.Backend
	start   func() (signer.Keeper, error)
	log     *slog.Logger

	mu      sync.Mutex
	started signer.Keeper
	err     error
	at      time.Time
}

func (p *pending) keeper() (signer.Keeper, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started != nil {
		return p.started, nil
	}
	if !errors.Is(p.err, pkcs11.ErrPINRefused) && time.Since(p.at) >= retryEvery {
		p.at = time.Now()
		k, err := p.start()
		if err == nil {
			p.log.Info("signer available", "backend", p.backend)
			p.started = k
			return k, nil
		}
		p.err = err
	}
	if _, ok := signer.Unavailable(p.err); ok {
		return nil, p.err
	}
	return nil, &signer.UnavailableError{Backend: p.backend, Reason: "the signer did not start", Err: p.err}
}

func (p *pending) Backend() signer.Backend { return p.backend }

func (p *pending) Make(ctx context.Context, name string) (signer.Key, error) {
	k, err := p.keeper()
	if err != nil {
		return signer.Key{}, err
	}
	return k.Make(ctx, name)
}

func (p *pending) Sign(ctx context.Context, key signer.Key, message []byte) ([]byte, error) {
	k, err := p.keeper()
	if err != nil {
		return nil, err
	}
	return k.Sign(ctx, key, message)
}

func (p *pending) Check(ctx context.Context) error {
	k, err := p.keeper()
	if err != nil {
		return err
	}
	return k.Check(ctx)
}

// Importer is the keeper of backend b if it can take in envelope keys.
func Importer(set *signer.Set, b signer.Backend) (signer.Importer, error) {
	k, ok := set.Keeper(b)
	if !ok {
		return nil, errors.New("no " + string(b) + " signer is configured")
	}
	if p, ok := k.(*pending); ok {
		started, err := p.keeper()
		if err != nil {
			return nil, err
		}
		k = started
	}
	imp, ok := k.(signer.Importer)
	if !ok {
		return nil, errors.New("the " + string(b) + " signer cannot import keys")
	}
	return imp, nil
}

// Close releases the keeper, once started.
func (p *pending) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.started.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

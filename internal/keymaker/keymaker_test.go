package keymaker_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// memKeeper keeps keys in memory: a keeper of the port's contract, so the
// hand-over through Redis is tested apart from any HSM.
type memKeeper struct {
	mu          sync.Mutex
	keys        map[string]ed25519.PrivateKey
	unavailable string
	delay       time.Duration
}

func (m *memKeeper) Backend() signer.Backend { return signer.Vault }

func (m *memKeeper) Make(ctx context.Context, name string) (signer.Key, error) {
	if m.delay > 0 {
		time.Sleep(m.delay)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unavailable != "" {
		return signer.Key{}, &signer.UnavailableError{Backend: signer.Vault, Reason: m.unavailable}
	}
	pub, priv, _ := ed25519.GenerateKey(nil)
	m.keys[name] = priv
	return signer.Key{Public: pub, Backend: signer.Vault, Ref: name}, nil
}

func (m *memKeeper) made() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}

func (m *memKeeper) Sign(_ context.Context, key signer.Key, msg []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ed25519.Sign(m.keys[key.Ref], msg), nil
}

func (m *memKeeper) Check(context.Context) error { return nil }

func serve(t *testing.T, k *memKeeper) *keymaker.Client {
	t.Helper()
	rdb, _ := redistest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		keymaker.Serve(ctx, rdb, &signer.Set{Keepers: map[signer.Backend]signer.Keeper{signer.Vault: k}}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &keymaker.Client{Redis: rdb, Backend: signer.Vault, Wait: time.Second}
}

// The API's request reaches a worker, which makes the key in its keeper
// and answers its public key and reference; the key signs for it.
func TestKeymaker_WorkerMakesTheKeyTheAPIAsksFor(t *testing.T) {
	t.Parallel()
	k := &memKeeper{keys: map[string]ed25519.PrivateKey{}}
	c := serve(t, k)
	key, err := c.Make(context.Background(), "wallet-1")
	if err != nil {
		t.Fatal(err)
	}
	if key.Backend != signer.Vault || key.Ref != "wallet-1" || len(key.Public) != ed25519.PublicKeySize {
		t.Fatalf("key %+v", key)
	}
	sig, err := signer.For(k, key)(context.Background(), key.Public, []byte("m"))
	if err != nil || !ed25519.Verify(key.Public, []byte("m"), sig) {
		t.Fatalf("the made key does not sign for its public key: %v", err)
	}
}

// A keeper that cannot make keys now is unavailable to the API, with its
// reason; no worker at all is unavailable once the wait is over.
func TestKeymaker_UnavailableKeeperOrNoWorkerIsUnavailable(t *testing.T) {
	t.Parallel()
	k := &memKeeper{keys: map[string]ed25519.PrivateKey{}, unavailable: "Vault is sealed"}
	c := serve(t, k)
	_, err := c.Make(context.Background(), "w")
	if u, ok := signer.Unavailable(err); !ok || u.Reason != "Vault is sealed" {
		t.Fatalf("keeper unavailable: %v", err)
	}

	rdb, _ := redistest.New(t)
	lone := &keymaker.Client{Redis: rdb, Backend: signer.PKCS11, Wait: 200 * time.Millisecond}
	start := time.Now()
	_, err = lone.Make(context.Background(), "w")
	if _, ok := signer.Unavailable(err); !ok {
		t.Fatalf("no worker: %v", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("waited %v for no worker", waited)
	}
}

// A worker that reaches a request after its asker stopped waiting makes
// no key: nobody would name it.
func TestKeymaker_RequestPastItsDeadlineMakesNoKey(t *testing.T) {
	t.Parallel()
	rdb, _ := redistest.New(t)
	early := &keymaker.Client{Redis: rdb, Backend: signer.Vault, Wait: 100 * time.Millisecond}
	if _, err := early.Make(context.Background(), "late"); err == nil {
		t.Fatal("made with no worker")
	}
	k := &memKeeper{keys: map[string]ed25519.PrivateKey{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go keymaker.Serve(ctx, rdb, &signer.Set{Keepers: map[signer.Backend]signer.Keeper{signer.Vault: k}}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c := &keymaker.Client{Redis: rdb, Backend: signer.Vault, Wait: time.Second}
	if _, err := c.Make(context.Background(), "now"); err != nil {
		t.Fatal(err)
	}
	if n := k.made(); n != 1 {
		t.Fatalf("%d keys made, want only the one still awaited", n)
	}
}

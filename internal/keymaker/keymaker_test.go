package keymaker_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/keymaker"
	"github.com/agentwallet/agentwallet/internal/pgtest"
	"github.com/agentwallet/agentwallet/internal/redistest"
	"github.com/agentwallet/agentwallet/internal/signer"
)

// memKeeper keeps keys in memory: a keeper of the port's contract, so the
// hand-over is tested apart from any HSM. hold, when set, keeps every
// Make waiting until it is closed.
type memKeeper struct {
	mu          sync.Mutex
	keys        map[string]ed25519.PrivateKey
	unavailable string
	hold        chan struct{}
	busy, most  int
}

func newKeeper() *memKeeper { return &memKeeper{keys: map[string]ed25519.PrivateKey{}} }

func (m *memKeeper) Backend() signer.Backend { return signer.Vault }

func (m *memKeeper) Make(ctx context.Context, name string) (signer.Key, error) {
	m.mu.Lock()
	m.busy++
	m.most = max(m.most, m.busy)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.busy--
		m.mu.Unlock()
	}()
	if m.hold != nil {
		select {
		case <-m.hold:
		case <-ctx.Done():
			return signer.Key{}, ctx.Err()
		}
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

func (m *memKeeper) mostAtOnce() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.most
}

func (m *memKeeper) Sign(_ context.Context, key signer.Key, msg []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ed25519.Sign(m.keys[key.Ref], msg), nil
}

func (m *memKeeper) Check(context.Context) error { return nil }

// stack is a database and a Redis the API's client and the workers share.
type stack struct {
	db  *bun.DB
	rdb *redis.Client
}

func newStack(t *testing.T) stack {
	t.Helper()
	rdb, _ := redistest.New(t)
	return stack{db: pgtest.New(t), rdb: rdb}
}

// serve runs a worker with keeper k (and slots, 0: the default) until the
// test ends.
func (s stack) serve(t *testing.T, k *memKeeper, slots int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	srv := &keymaker.Server{DB: s.db, Redis: s.rdb, Signers: &signer.Set{Keepers: map[signer.Backend]signer.Keeper{signer.Vault: k}},
		Log: discard(), Slots: slots, Every: 50 * time.Millisecond}
	go func() {
		defer close(done)
		srv.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func (s stack) client(wait time.Duration) *keymaker.Client {
	return &keymaker.Client{DB: s.db, Redis: s.rdb, Backend: signer.Vault, Wait: wait}
}

// The API's request reaches a worker, which makes the key in its keeper
// and records its public key and reference; the key signs for it.
func TestKeymaker_WorkerMakesTheKeyTheAPIAsksFor(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	k := newKeeper()
	s.serve(t, k, 0)
	key, err := s.client(time.Minute).Make(context.Background(), "wallet-1")
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

// Without Redis (down, or never woken) a worker still finds the request
// on its own tick.
func TestKeymaker_WorkerFindsRequestsWithoutAWake(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	k := newKeeper()
	s.serve(t, k, 0)
	c := &keymaker.Client{DB: s.db, Backend: signer.Vault, Wait: time.Minute}
	if _, err := c.Make(context.Background(), "quiet"); err != nil {
		t.Fatal(err)
	}
}

// A keeper that cannot make keys now is unavailable to the API, with its
// reason; no worker at all is unavailable once the wait is over.
func TestKeymaker_UnavailableKeeperOrNoWorkerIsUnavailable(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	k := newKeeper()
	k.unavailable = "Vault is sealed"
	s.serve(t, k, 0)
	_, err := s.client(time.Minute).Make(context.Background(), "w")
	if u, ok := signer.Unavailable(err); !ok || u.Reason != "Vault is sealed" {
		t.Fatalf("keeper unavailable: %v", err)
	}

	lone := newStack(t)
	_, err = (&keymaker.Client{DB: lone.db, Redis: lone.rdb, Backend: signer.PKCS11, Wait: 200 * time.Millisecond}).Make(context.Background(), "w")
	if _, ok := signer.Unavailable(err); !ok {
		t.Fatalf("no worker: %v", err)
	}
}

// A worker that reaches a request after its asker stopped waiting makes
// no key: nobody would name it.
func TestKeymaker_RequestPastItsDeadlineMakesNoKey(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	if _, err := s.client(100*time.Millisecond).Make(context.Background(), "late"); err == nil {
		t.Fatal("made with no worker")
	}
	k := newKeeper()
	s.serve(t, k, 0)
	if _, err := s.client(time.Minute).Make(context.Background(), "now"); err != nil {
		t.Fatal(err)
	}
	if n := k.made(); n != 1 {
		t.Fatalf("%d keys made, want only the one still awaited", n)
	}
}

// Whoever can write to Redis cannot answer a key request: a forger that
// reads every list and answers every request it sees, in the reply format
// workers once used, with a key of its own, gives the API no key when no
// worker runs, and the worker's key when one does, never the forger's.
func TestKeymaker_ForgedRepliesOnRedisMakeNoKey(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	forged, _, _ := ed25519.GenerateKey(nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go forge(ctx, s.rdb, forged)

	if key, err := s.client(time.Second).Make(context.Background(), "no-worker"); err == nil {
		t.Fatalf("a key with no worker running: %x (forged %x)", key.Public, forged)
	}
	k := newKeeper()
	s.serve(t, k, 0)
	key, err := s.client(time.Minute).Make(context.Background(), "worker")
	if err != nil {
		t.Fatal(err)
	}
	if ed25519.PublicKey(key.Public).Equal(forged) || k.made() != 1 {
		t.Fatalf("key %x, forged %x, %d made by the worker", key.Public, forged, k.made())
	}
	if _, ok := k.keys["worker"]; !ok || !ed25519.PublicKey(key.Public).Equal(k.keys["worker"].Public()) {
		t.Fatal("the API's key is not the one the worker made")
	}
}

// forge plays an attacker with full access to Redis: it pops every entry
// of every list it finds and, for anything that names a request id,
// pushes a reply carrying its own public key where the asker would read
// it, until ctx ends.
func forge(ctx context.Context, rdb *redis.Client, public ed25519.PublicKey) {
	for ctx.Err() == nil {
		keys, _ := rdb.Keys(ctx, "*").Result()
		keys = append(keys, "agentwallet:keys:make", keymaker.WakeKey)
		for _, k := range keys {
			if rdb.Type(ctx, k).Val() != "list" {
				continue
			}
			for {
				raw, err := rdb.RPop(ctx, k).Result()
				if err != nil {
					break
				}
				var req struct {
					ID uuid.UUID `json:"id"`
				}
				reply, _ := json.Marshal(map[string]any{"public": []byte(public), "ref": "forged"})
				if json.Unmarshal([]byte(raw), &req) == nil && req.ID != uuid.Nil {
					rdb.LPush(ctx, "agentwallet:keys:made:"+req.ID.String(), reply)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// A worker makes at most its slots' worth of keys at once, however many
// requests arrive: each KMS key costs money and a token's objects are
// finite. The rest wait for a slot.
func TestKeymaker_WorkerBoundsTheKeysItMakesAtOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	k := newKeeper()
	k.hold = make(chan struct{})
	s.serve(t, k, 2)
	const asks = 8
	var wg sync.WaitGroup
	errs := make(chan error, asks)
	for i := range asks {
		wg.Go(func() {
			_, err := s.client(time.Minute).Make(context.Background(), "k"+string(rune('a'+i)))
			errs <- err
		})
	}
	// Every request is recorded before the keeper lets any key out.
	for {
		var n int
		if err := s.db.NewSelect().Table("key_requests").ColumnExpr("count(*)").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n == asks {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(k.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if most := k.mostAtOnce(); most > 2 || k.made() != asks {
		t.Fatalf("%d keys made at once (slots 2), %d made of %d", most, k.made(), asks)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

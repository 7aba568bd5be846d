//go:build pkcs11

package pkcs11_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	p11 "github.com/miekg/pkcs11"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11"
	"github.com/agentwallet/agentwallet/internal/signer/pkcs11/softhsmtest"
)

func TestMain(m *testing.M) { os.Exit(softhsmtest.Run(m)) }

const ckkECEdwards = 0x40

var ed25519OID = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}

func newSigner(t testing.TB, cfg pkcs11.Config) *pkcs11.Signer {
	t.Helper()
	s, err := pkcs11.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustMake(t testing.TB, s *pkcs11.Signer) signer.Key {
	t.Helper()
	key, err := s.Make(context.Background(), uuid.NewString())
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	return key
}

func mustSign(t testing.TB, s *pkcs11.Signer, key signer.Key, message []byte) {
	t.Helper()
	sig, err := s.Sign(context.Background(), key, message)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if !ed25519.Verify(key.Public, message, sig) {
		t.Fatal("the signature does not verify")
	}
}

// objects lists the objects of class labelled label.
func objects(t *testing.T, s *pkcs11.Signer, label string, class uint) []p11.ObjectHandle {
	t.Helper()
	var objs []p11.ObjectHandle
	err := s.Do(context.Background(), func(c *p11.Ctx, h p11.SessionHandle) error {
		err := c.FindObjectsInit(h, []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, class),
			p11.NewAttribute(p11.CKA_LABEL, label),
		})
		if err != nil {
			return err
		}
		objs, _, err = c.FindObjects(h, 10)
		_ = c.FindObjectsFinal(h)
		return err
	})
	if err != nil {
		t.Fatalf("find objects: %v", err)
	}
	return objs
}

// privateKey is the one private key labelled label.
func privateKey(t *testing.T, s *pkcs11.Signer, label string) p11.ObjectHandle {
	t.Helper()
	objs := objects(t, s, label, p11.CKO_PRIVATE_KEY)
	if len(objs) != 1 {
		t.Fatalf("%d private keys labelled %s, want 1", len(objs), label)
	}
	return objs[0]
}

// assertLockedIn checks that the private key labelled label is a token
// object that signs and that nobody can read: sensitive, not extractable,
// and its CKA_VALUE refused. A key made in the token (made) has also
// never been anything else; an imported one truthfully says it has.
func assertLockedIn(t *testing.T, s *pkcs11.Signer, label string, made bool) {
	t.Helper()
	priv := privateKey(t, s, label)
	want := map[uint]bool{
		p11.CKA_TOKEN:       true,
		p11.CKA_PRIVATE:     true,
		p11.CKA_SIGN:        true,
		p11.CKA_SENSITIVE:   true,
		p11.CKA_EXTRACTABLE: false,
	}
	if made {
		want[p11.CKA_ALWAYS_SENSITIVE] = true
		want[p11.CKA_NEVER_EXTRACTABLE] = true
		want[p11.CKA_LOCAL] = true
	}
	err := s.Do(context.Background(), func(c *p11.Ctx, h p11.SessionHandle) error {
		var template []*p11.Attribute
		for typ := range want {
			template = append(template, p11.NewAttribute(typ, nil))
		}
		attrs, err := c.GetAttributeValue(h, priv, template)
		if err != nil {
			return err
		}
		for _, a := range attrs {
			if got := len(a.Value) == 1 && a.Value[0] == 1; got != want[a.Type] {
				t.Errorf("attribute 0x%x = %v, want %v", a.Type, got, want[a.Type])
			}
		}
		_, err = c.GetAttributeValue(h, priv, []*p11.Attribute{p11.NewAttribute(p11.CKA_VALUE, nil)})
		if !errors.Is(err, p11.Error(p11.CKR_ATTRIBUTE_SENSITIVE)) {
			t.Errorf("reading CKA_VALUE: %v, want CKR_ATTRIBUTE_SENSITIVE", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPKCS11_MadeKeyIsSensitiveAndNotExtractable(t *testing.T) {
	t.Parallel()
	s := newSigner(t, softhsmtest.Token(t))
	name := uuid.NewString()

	key, err := s.Make(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if key.Backend != signer.PKCS11 || key.Ref != name || len(key.Public) != ed25519.PublicKeySize {
		t.Fatalf("key = %+v, want a pkcs11 key named %s with a 32-byte public key", key, name)
	}
	assertLockedIn(t, s, name, true)
	if n := len(objects(t, s, name, p11.CKO_PUBLIC_KEY)); n != 1 {
		t.Errorf("%d public keys labelled %s, want 1", n, name)
	}
}

func TestPKCS11_SignsAndTheSignatureVerifies(t *testing.T) {
	t.Parallel()
	s := newSigner(t, softhsmtest.Token(t))
	key := mustMake(t, s)

	for _, size := range []int{1, 200, 1232} { // 1,232 bytes: Solana's largest message
		message := make([]byte, size)
		_, _ = rand.Read(message)
		mustSign(t, s, key, message)
	}

	// Through signer.For, as a transaction's builder asks for it.
	message := []byte("a transfer")
	sig, err := signer.For(s, key)(context.Background(), key.Public, message)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(key.Public, message, sig) {
		t.Fatal("the signature does not verify")
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

func TestPKCS11_ImportedSeedSignsForTheSameAddress(t *testing.T) {
	t.Parallel()
	s := newSigner(t, softhsmtest.Token(t))
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	name := uuid.NewString()

	key, err := s.Import(context.Background(), name, priv.Seed())
	if err != nil {
		t.Fatal(err)
	}
	if !key.Public.Equal(pub) || key.Backend != signer.PKCS11 || key.Ref != name {
		t.Fatalf("key = %+v, want the wallet's public key under %s", key, name)
	}
	mustSign(t, s, signer.Key{Public: pub, Backend: signer.PKCS11, Ref: name}, []byte("same address"))
	assertLockedIn(t, s, name, false)

	t.Run("the 64-byte private key is refused and leaves nothing", func(t *testing.T) {
		other := uuid.NewString()
		if _, err := s.Import(context.Background(), other, priv); err == nil {
			t.Fatal("Import of a 64-byte key succeeded")
		}
		if n := len(objects(t, s, other, p11.CKO_PRIVATE_KEY)); n != 0 {
			t.Fatalf("%d private keys left under %s", n, other)
		}
	})
}

func TestPKCS11_WrongPINIsUnavailableAtOnce(t *testing.T) {
	t.Parallel()
	cfg := softhsmtest.Token(t) // a token of its own: wrong tries count against its PIN
	right := cfg.PIN
	cfg.PIN = "not-" + right

	start := time.Now()
	s, err := pkcs11.New(cfg)
	elapsed := time.Since(start)
	if err == nil {
		_ = s.Close()
		t.Fatal("New with a wrong PIN succeeded")
	}
	u, ok := signer.Unavailable(err)
	if !ok || u.Backend != signer.PKCS11 {
		t.Fatalf("err = %v, want a pkcs11 UnavailableError", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("New took %v to refuse the PIN, want under 2 s", elapsed)
	}
	if strings.Contains(err.Error(), cfg.PIN) || strings.Contains(err.Error(), right) {
		t.Errorf("the error shows a PIN: %v", err)
	}

	// One refusal did not lock the token.
	cfg.PIN = right
	mustMake(t, newSigner(t, cfg))
}

func TestPKCS11_MissingModuleOrTokenIsUnavailable(t *testing.T) {
	t.Parallel()
	cfg := softhsmtest.Token(t)
	for name, cfg := range map[string]pkcs11.Config{
		"module": {Module: "/nonexistent/libpkcs11.so", TokenLabel: cfg.TokenLabel, PIN: cfg.PIN},
		"token":  {Module: cfg.Module, TokenLabel: "absent-" + cfg.TokenLabel[:20], PIN: cfg.PIN},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := pkcs11.New(cfg)
			if err == nil {
				_ = s.Close()
				t.Fatal("New succeeded")
			}
			if _, ok := signer.Unavailable(err); !ok {
				t.Fatalf("err = %v, want an UnavailableError", err)
			}
		})
	}
}

func TestPKCS11_AnotherKeyUnderTheLabelNeverSigns(t *testing.T) {
	t.Parallel()
	cfg := softhsmtest.Token(t)
	s := newSigner(t, cfg)
	ctx := context.Background()

	t.Run("a new key pair under the label", func(t *testing.T) {
		key := mustMake(t, s)
		mustSign(t, s, key, []byte("remembered")) // s now remembers the key's handle
		// Another process of the fleet deletes it and makes another.
		other := newSigner(t, cfg)
		if err := other.Delete(ctx, key.Ref); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Make(ctx, key.Ref); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sign(ctx, key, []byte("x")); !errors.Is(err, pkcs11.ErrKeyMismatch) {
			t.Fatalf("Sign = %v, want ErrKeyMismatch", err)
		}
	})

	t.Run("a private half that is not the public half's", func(t *testing.T) {
		pub, _, _ := ed25519.GenerateKey(rand.Reader)
		_, impostor, _ := ed25519.GenerateKey(rand.Reader)
		name := uuid.NewString()
		err := s.Do(ctx, func(c *p11.Ctx, h p11.SessionHandle) error {
			_, err := c.CreateObject(h, []*p11.Attribute{
				p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
				p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
				p11.NewAttribute(p11.CKA_TOKEN, true),
				p11.NewAttribute(p11.CKA_EC_PARAMS, ed25519OID),
				p11.NewAttribute(p11.CKA_EC_POINT, append([]byte{0x04, 0x20}, pub...)),
				p11.NewAttribute(p11.CKA_LABEL, name),
			})
			if err != nil {
				return err
			}
			_, err = c.CreateObject(h, []*p11.Attribute{
				p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY),
				p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
				p11.NewAttribute(p11.CKA_TOKEN, true),
				p11.NewAttribute(p11.CKA_PRIVATE, true),
				p11.NewAttribute(p11.CKA_SIGN, true),
				p11.NewAttribute(p11.CKA_EC_PARAMS, ed25519OID),
				p11.NewAttribute(p11.CKA_VALUE, impostor.Seed()),
				p11.NewAttribute(p11.CKA_LABEL, name),
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		key := signer.Key{Public: pub, Backend: signer.PKCS11, Ref: name}
		sig, err := s.Sign(ctx, key, []byte("x"))
		if !errors.Is(err, pkcs11.ErrKeyMismatch) || sig != nil {
			t.Fatalf("Sign = %x, %v; want no signature and ErrKeyMismatch", sig, err)
		}
	})

	t.Run("two private keys under the label", func(t *testing.T) {
		key := mustMake(t, s)
		_, seed, _ := ed25519.GenerateKey(rand.Reader)
		other := newSigner(t, cfg)
		if _, err := other.Import(ctx, key.Ref+"-2", seed.Seed()); err != nil {
			t.Fatal(err)
		}
		// Relabel the imported private key onto the wallet's label.
		priv := privateKey(t, other, key.Ref+"-2")
		err := other.Do(ctx, func(c *p11.Ctx, h p11.SessionHandle) error {
			return c.SetAttributeValue(h, priv, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, key.Ref)})
		})
		if err != nil {
			t.Fatal(err)
		}
		fresh := newSigner(t, cfg) // remembers nothing yet
		if _, err := fresh.Sign(ctx, key, []byte("x")); !errors.Is(err, pkcs11.ErrKeyMismatch) {
			t.Fatalf("Sign = %v, want ErrKeyMismatch", err)
		}
	})
}

func TestPKCS11_ConcurrentSignsShareThePool(t *testing.T) {
	t.Parallel()
	cfg := softhsmtest.Token(t)
	cfg.Sessions = 2
	s := newSigner(t, cfg)
	keys := []signer.Key{mustMake(t, s), mustMake(t, s), mustMake(t, s)}

	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := keys[(w+i)%len(keys)]
				message := fmt.Appendf(nil, "worker %d signature %d", w, i)
				sig, err := s.Sign(context.Background(), key, message)
				if err == nil && !ed25519.Verify(key.Public, message, sig) {
					err = errors.New("a signature does not verify")
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.Opened(); n < 1 || n > cfg.Sessions {
		t.Errorf("%d sessions opened, want 1 to %d", n, cfg.Sessions)
	}
}

func TestPKCS11_SignWaitsForASessionOnlyWhileTheContextAllows(t *testing.T) {
	t.Parallel()
	cfg := softhsmtest.Token(t)
	cfg.Sessions = 1
	s := newSigner(t, cfg)
	key := mustMake(t, s)

	release, err := s.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Sign(ctx, key, []byte("x"))
	if _, ok := signer.Unavailable(err); !ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sign on a busy pool = %v, want an UnavailableError wrapping the deadline", err)
	}
	release()
	mustSign(t, s, key, []byte("x"))
}

// TestPKCS11_ReconnectsAfterTheTokenRestarts is not parallel: one of its
// cases finalizes the module, which every Signer of the process shares.
func TestPKCS11_ReconnectsAfterTheTokenRestarts(t *testing.T) {
	cfg := softhsmtest.Token(t)
	s := newSigner(t, cfg)
	key := mustMake(t, s)
	mustSign(t, s, key, []byte("before"))

	// A second handle on the same library, as another part of the process
	// (or the token's own restart) would act on it.
	restart := map[string]func(c *p11.Ctx, slot uint) error{
		"every session closed": func(c *p11.Ctx, slot uint) error {
			return c.CloseAllSessions(slot)
		},
		"logged out": func(c *p11.Ctx, slot uint) error {
			h, err := c.OpenSession(slot, p11.CKF_SERIAL_SESSION)
			if err != nil {
				return err
			}
			defer func() { _ = c.CloseSession(h) }()
			return c.Logout(h)
		},
		"the module finalized": func(c *p11.Ctx, _ uint) error {
			return c.Finalize()
		},
	}
	for _, name := range []string{"every session closed", "logged out", "the module finalized"} {
		t.Run(name, func(t *testing.T) {
			c := p11.New(cfg.Module)
			if c == nil {
				t.Fatal("cannot load the module")
			}
			defer c.Destroy()
			if err := c.Initialize(); err != nil && !errors.Is(err, p11.Error(p11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
				t.Fatal(err)
			}
			before := s.Reconnects()
			if err := restart[name](c, s.Slot()); err != nil {
				t.Fatal(err)
			}
			mustSign(t, s, key, []byte("after "+name))
			if err := s.Check(context.Background()); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if s.Reconnects() != before+1 {
				t.Errorf("reconnected %d times, want once", s.Reconnects()-before)
			}
		})
	}
}

func TestPKCS11_SignersShareTheModule(t *testing.T) {
	t.Parallel()
	a := newSigner(t, softhsmtest.Token(t))
	b := newSigner(t, softhsmtest.Token(t))
	key := mustMake(t, b)

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	// Had a's Close finalized the module, b would have to reconnect.
	mustSign(t, b, key, []byte("still here"))
	if n := b.Reconnects(); n != 0 {
		t.Errorf("b reconnected %d times after a closed, want 0", n)
	}
	if _, err := a.Sign(context.Background(), key, []byte("x")); !errors.Is(err, pkcs11.ErrClosed) {
		t.Errorf("Sign after Close = %v, want ErrClosed", err)
	}
}

func TestPKCS11_DeleteRemovesTheKey(t *testing.T) {
	t.Parallel()
	s := newSigner(t, softhsmtest.Token(t))
	ctx := context.Background()
	key := mustMake(t, s)
	mustSign(t, s, key, []byte("x"))

	if err := s.Delete(ctx, key.Ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(ctx, key, []byte("x")); !errors.Is(err, signer.ErrNoKey) {
		t.Fatalf("Sign after Delete = %v, want ErrNoKey", err)
	}
	for _, class := range []uint{p11.CKO_PRIVATE_KEY, p11.CKO_PUBLIC_KEY} {
		if n := len(objects(t, s, key.Ref, class)); n != 0 {
			t.Errorf("%d objects of class %d left under the label", n, class)
		}
	}
	if err := s.Delete(ctx, key.Ref); err != nil {
		t.Errorf("deleting again: %v, want nil", err)
	}
	again, err := s.Make(ctx, key.Ref)
	if err != nil {
		t.Fatalf("Make under the freed label: %v", err)
	}
	if again.Public.Equal(key.Public) {
		t.Error("the new key is the deleted one")
	}
}

func TestPKCS11_MakeRefusesALabelInUse(t *testing.T) {
	t.Parallel()
	s := newSigner(t, softhsmtest.Token(t))
	ctx := context.Background()
	key := mustMake(t, s)

	if _, err := s.Make(ctx, key.Ref); !errors.Is(err, pkcs11.ErrLabelInUse) {
		t.Errorf("Make = %v, want ErrLabelInUse", err)
	}
	_, seed, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := s.Import(ctx, key.Ref, seed.Seed()); !errors.Is(err, pkcs11.ErrLabelInUse) {
		t.Errorf("Import = %v, want ErrLabelInUse", err)
	}
	if n := len(objects(t, s, key.Ref, p11.CKO_PRIVATE_KEY)); n != 1 {
		t.Errorf("%d private keys under the label, want 1", n)
	}
	mustSign(t, s, key, []byte("still the first key"))

	t.Run("two at once", func(t *testing.T) {
		name := uuid.NewString()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var made []signer.Key
		for range 4 {
			wg.Go(func() {
				if k, err := s.Make(ctx, name); err == nil {
					mu.Lock()
					made = append(made, k)
					mu.Unlock()
				} else if !errors.Is(err, pkcs11.ErrLabelInUse) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if len(made) != 1 {
			t.Fatalf("%d Makes succeeded, want 1", len(made))
		}
	})
}

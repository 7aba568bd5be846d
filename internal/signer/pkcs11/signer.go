//go:build pkcs11

package pkcs11

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// Signer keeps wallet keys in one PKCS#11 token and signs with them
// there. Each key is a token object pair labelled with its wallet's name;
// the private half is sensitive and never extractable. It signs on a pool
// of Config.Sessions sessions sharing one login, and reconnects once when
// the token or the library restarted under it.
type Signer struct {
	cfg     Config
	mod     *module
	tickets chan struct{} // one per pool session: held while using one

	// labels serializes Make, Import and Delete: checking that a label is
	// free and creating under it are one step.
	labels sync.Mutex

	mu         sync.Mutex
	closed     bool
	refused    error // the PIN was refused: never tried again
	connected  bool
	gen        uint64 // counts reconnects: a session of an older one is dead
	slot       uint
	idle       []p11.SessionHandle
	opened     int               // sessions opened since the last connect
	keys       map[string]keyRef // by label, for this connection only
	connectErr error
	retryAt    time.Time
}

// keyRef is a wallet key as found in the token: the private key's handle
// and the public key stored beside it under the same label.
type keyRef struct {
	priv p11.ObjectHandle
	pub  ed25519.PublicKey
}

var _ signer.Keeper = (*Signer)(nil)

var (
	eddsa      = []*p11.Mechanism{p11.NewMechanism(ckmEdDSA, nil)}
	edwardsGen = []*p11.Mechanism{p11.NewMechanism(ckmECEdwardsKeyPairGen, nil)}
)

// New loads cfg.Module (shared with other Signers of the process), finds
// the token labelled cfg.TokenLabel and logs in. A module that will not
// load, a missing token or a refused PIN is a *signer.UnavailableError; a
// refused PIN is not tried again, since a real token locks its PIN after a
// few wrong tries.
func New(cfg Config) (*Signer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	mod, err := openModule(cfg.Module)
	if err != nil {
		return nil, err
	}
	s := &Signer{cfg: cfg, mod: mod, tickets: make(chan struct{}, cfg.Sessions)}
	s.mu.Lock()
	err = s.connect()
	if err == nil {
		if _, merr := mod.ctx.GetMechanismInfo(s.slot, eddsa); merr != nil {
			err = unavailable("the token does not sign Ed25519 (no CKM_EDDSA)", merr)
			for _, h := range s.idle {
				_ = mod.ctx.CloseSession(h)
			}
			s.idle = nil
		}
	}
	s.mu.Unlock()
	if err != nil {
		mod.release()
		return nil, err
	}
	return s, nil
}

func (c Config) withDefaults() (Config, error) {
	if c.Sessions == 0 {
		c.Sessions = DefaultSessions
	}
	switch {
	case c.Module == "":
		return c, errors.New("pkcs11: no module (the PKCS#11 library's path)")
	case c.TokenLabel == "":
		return c, errors.New("pkcs11: no token label")
	case len(c.TokenLabel) > 32:
		return c, fmt.Errorf("pkcs11: token label %q is longer than PKCS#11's 32 bytes", c.TokenLabel)
	case c.PIN == "":
		return c, errors.New("pkcs11: no PIN")
	case c.Sessions < 0:
		return c, fmt.Errorf("pkcs11: %d sessions", c.Sessions)
	}
	return c, nil
}

// Backend is signer.PKCS11.
func (s *Signer) Backend() signer.Backend { return signer.PKCS11 }

// Make generates an Ed25519 key pair inside the token, labelled name on
// both halves, and returns its public key. It refuses a name the token
// already has an object under (ErrLabelInUse).
func (s *Signer) Make(ctx context.Context, name string) (signer.Key, error) {
	if name == "" {
		return signer.Key{}, errors.New("pkcs11: make: empty name")
	}
	s.labels.Lock()
	defer s.labels.Unlock()
	var pub ed25519.PublicKey
	err := s.do(ctx, func(sess session) error {
		if err := s.labelFree(sess, name); err != nil {
			return err
		}
		pubT := []*p11.Attribute{
			p11.NewAttribute(p11.CKA_TOKEN, true),
			p11.NewAttribute(p11.CKA_PRIVATE, false),
			p11.NewAttribute(p11.CKA_VERIFY, true),
			p11.NewAttribute(p11.CKA_EC_PARAMS, ed25519OID),
			p11.NewAttribute(p11.CKA_LABEL, name),
			p11.NewAttribute(p11.CKA_ID, []byte(name)),
		}
		pubH, privH, err := s.mod.ctx.GenerateKeyPair(sess.h, edwardsGen, pubT, privateTemplate(name))
		if err != nil {
			return fmt.Errorf("pkcs11: generate key pair: %w", err)
		}
		if pub, err = s.publicKey(sess, pubH); err != nil {
			s.destroy(sess, pubH, privH)
			return err
		}
		return nil
	})
	if err != nil {
		return signer.Key{}, err
	}
	return signer.Key{Public: pub, Backend: signer.PKCS11, Ref: name}, nil
}

// Import puts an existing wallet's key, its 32-byte Ed25519 seed, into the
// token as a sensitive, non-extractable key labelled name, so a wallet
// moves from the envelope keystore into the token keeping its address.
// It proves the stored key signs for the seed's public key before
// returning it.
func (s *Signer) Import(ctx context.Context, name string, seed []byte) (signer.Key, error) {
	if name == "" {
		return signer.Key{}, errors.New("pkcs11: import: empty name")
	}
	// The 64-byte ed25519.PrivateKey form is stored without complaint and
	// then fails at signing: only the seed is a token's CKA_VALUE.
	if len(seed) != ed25519.SeedSize {
		return signer.Key{}, fmt.Errorf("pkcs11: import: %d-byte key, want the 32-byte Ed25519 seed", len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	clear(priv)

	s.labels.Lock()
	defer s.labels.Unlock()
	err := s.do(ctx, func(sess session) error {
		if err := s.labelFree(sess, name); err != nil {
			return err
		}
		value := bytes.Clone(seed)
		defer clear(value)
		privT := append(privateTemplate(name),
			p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY),
			p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
			p11.NewAttribute(p11.CKA_EC_PARAMS, ed25519OID),
			p11.NewAttribute(p11.CKA_VALUE, value),
		)
		privH, err := s.mod.ctx.CreateObject(sess.h, privT)
		if err != nil {
			return fmt.Errorf("pkcs11: import private key: %w", err)
		}
		pubH, err := s.mod.ctx.CreateObject(sess.h, []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
			p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
			p11.NewAttribute(p11.CKA_TOKEN, true),
			p11.NewAttribute(p11.CKA_PRIVATE, false),
			p11.NewAttribute(p11.CKA_VERIFY, true),
			p11.NewAttribute(p11.CKA_EC_PARAMS, ed25519OID),
			p11.NewAttribute(p11.CKA_EC_POINT, encodePoint(pub)),
			p11.NewAttribute(p11.CKA_LABEL, name),
			p11.NewAttribute(p11.CKA_ID, []byte(name)),
		})
		if err != nil {
			s.destroy(sess, privH)
			return fmt.Errorf("pkcs11: import public key: %w", err)
		}
		probe := []byte("agentwallet/pkcs11/import/" + name)
		sig, err := s.signWith(sess, keyRef{priv: privH, pub: pub}, name, pub, probe)
		if err == nil && !ed25519.Verify(pub, probe, sig) {
			err = fmt.Errorf("%w %q: the imported key signs for another public key", ErrKeyMismatch, name)
		}
		if err != nil {
			s.destroy(sess, privH, pubH)
			return err
		}
		return nil
	})
	if err != nil {
		return signer.Key{}, err
	}
	return signer.Key{Public: pub, Backend: signer.PKCS11, Ref: name}, nil
}

func privateTemplate(name string) []*p11.Attribute {
	return []*p11.Attribute{
		p11.NewAttribute(p11.CKA_TOKEN, true),
		p11.NewAttribute(p11.CKA_PRIVATE, true),
		p11.NewAttribute(p11.CKA_SENSITIVE, true),
		p11.NewAttribute(p11.CKA_EXTRACTABLE, false),
		p11.NewAttribute(p11.CKA_SIGN, true),
		p11.NewAttribute(p11.CKA_LABEL, name),
		p11.NewAttribute(p11.CKA_ID, []byte(name)),
	}
}

// Sign signs message with the private key labelled key.Ref, in one C_Sign
// (tokens refuse multi-part EdDSA). The public key stored under the label
// must be key.Public, and the signature must verify against it: a
// different key under the label never yields a signature (ErrKeyMismatch).
func (s *Signer) Sign(ctx context.Context, key signer.Key, message []byte) ([]byte, error) {
	if key.Backend != signer.PKCS11 {
		return nil, fmt.Errorf("pkcs11: sign: a %q key", key.Backend)
	}
	if len(key.Public) != ed25519.PublicKeySize || key.Ref == "" {
		return nil, errors.New("pkcs11: sign: the key has no public key or no label")
	}
	var sig []byte
	err := s.do(ctx, func(sess session) error {
		k, cached, err := s.lookup(sess, key.Ref)
		if err != nil {
			return err
		}
		sig, err = s.signWith(sess, k, key.Ref, key.Public, message)
		if cached && (isRV(err, p11.CKR_OBJECT_HANDLE_INVALID) || isRV(err, p11.CKR_KEY_HANDLE_INVALID)) {
			// The remembered object is gone: deleted by someone else, or
			// hidden because the login was lost. Look again.
			s.forget(key.Ref)
			if k, _, err = s.lookup(sess, key.Ref); err != nil {
				return err
			}
			sig, err = s.signWith(sess, k, key.Ref, key.Public, message)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	// The stored public key is only a label's claim: the signature shows
	// which private key really signed.
	if !ed25519.Verify(key.Public, message, sig) {
		s.forget(key.Ref)
		return nil, fmt.Errorf("%w %q: its signature does not verify", ErrKeyMismatch, key.Ref)
	}
	return sig, nil
}

func (s *Signer) signWith(sess session, k keyRef, label string, want ed25519.PublicKey, message []byte) ([]byte, error) {
	if !k.pub.Equal(want) {
		return nil, fmt.Errorf("%w %q", ErrKeyMismatch, label)
	}
	if err := s.mod.ctx.SignInit(sess.h, eddsa, k.priv); err != nil {
		return nil, fmt.Errorf("pkcs11: sign: %w", err)
	}
	sig, err := s.mod.ctx.Sign(sess.h, message)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: sign: %w", err)
	}
	return sig, nil
}

// Delete destroys every object labelled name: both halves of a key made
// for a wallet whose creation then failed. A name with nothing under it
// is already deleted.
func (s *Signer) Delete(ctx context.Context, name string) error {
	if name == "" {
		return errors.New("pkcs11: delete: empty name")
	}
	s.labels.Lock()
	defer s.labels.Unlock()
	defer s.forget(name)
	return s.do(ctx, func(sess session) error {
		// Logged out, the private half would be invisible and survive.
		if err := s.loggedIn(sess); err != nil {
			return err
		}
		for {
			objs, err := s.findObjects(sess, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, name)}, 16)
			if err != nil || len(objs) == 0 {
				return err
			}
			for _, o := range objs {
				if err := s.mod.ctx.DestroyObject(sess.h, o); err != nil {
					return fmt.Errorf("pkcs11: delete %q: %w", name, err)
				}
			}
		}
	})
}

// Check reports whether the token is there and logged in, reconnecting
// once if it is not.
func (s *Signer) Check(ctx context.Context) error {
	err := s.do(ctx, s.loggedIn)
	if _, ok := signer.Unavailable(err); err != nil && !ok {
		return unavailable("the token does not answer", err)
	}
	return err
}

// Close waits for signatures in progress, closes the pool's sessions and
// releases the module, finalizing it if no other Signer uses it.
func (s *Signer) Close() error {
	for range cap(s.tickets) {
		s.tickets <- struct{}{}
	}
	s.mu.Lock()
	wasClosed := s.closed
	if !wasClosed {
		for _, h := range s.idle {
			_ = s.mod.ctx.CloseSession(h)
		}
		s.closed, s.connected, s.idle, s.keys = true, false, nil, nil
	}
	s.mu.Unlock()
	for range cap(s.tickets) {
		<-s.tickets
	}
	if !wasClosed {
		s.mod.release()
	}
	return nil
}

// lookup finds the key labelled label, from this connection's memory when
// it can; cached says it came from there.
func (s *Signer) lookup(sess session, label string) (k keyRef, cached bool, err error) {
	s.mu.Lock()
	k, cached = s.keys[label]
	s.mu.Unlock()
	if cached {
		return k, true, nil
	}
	k, err = s.find(sess, label)
	if err != nil {
		return keyRef{}, false, err
	}
	s.mu.Lock()
	if sess.gen == s.gen && s.keys != nil {
		s.keys[label] = k
	}
	s.mu.Unlock()
	return k, false, nil
}

func (s *Signer) find(sess session, label string) (keyRef, error) {
	privs, err := s.findObjects(sess, []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
		p11.NewAttribute(p11.CKA_LABEL, label),
	}, 2)
	if err != nil {
		return keyRef{}, err
	}
	if len(privs) == 0 {
		// Private objects are invisible to a session that is not logged
		// in: a lost login, not a missing key.
		if err := s.loggedIn(sess); err != nil {
			return keyRef{}, err
		}
		return keyRef{}, fmt.Errorf("pkcs11: no key labelled %q: %w", label, signer.ErrNoKey)
	}
	pubs, err := s.findObjects(sess, []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, ckkECEdwards),
		p11.NewAttribute(p11.CKA_LABEL, label),
	}, 2)
	if err != nil {
		return keyRef{}, err
	}
	if len(privs) != 1 || len(pubs) != 1 {
		return keyRef{}, fmt.Errorf("%w %q: %d private and %d public keys under it, want one of each",
			ErrKeyMismatch, label, len(privs), len(pubs))
	}
	pub, err := s.publicKey(sess, pubs[0])
	if err != nil {
		return keyRef{}, err
	}
	return keyRef{priv: privs[0], pub: pub}, nil
}

func (s *Signer) forget(label string) {
	s.mu.Lock()
	delete(s.keys, label)
	s.mu.Unlock()
}

// labelFree fails with ErrLabelInUse when any object has label name.
func (s *Signer) labelFree(sess session, name string) error {
	if err := s.loggedIn(sess); err != nil {
		return err
	}
	objs, err := s.findObjects(sess, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, name)}, 1)
	if err != nil {
		return err
	}
	if len(objs) > 0 {
		return fmt.Errorf("%w: %q", ErrLabelInUse, name)
	}
	return nil
}

// loggedIn fails with CKR_USER_NOT_LOGGED_IN, which reconnects, when the
// session has lost its login.
func (s *Signer) loggedIn(sess session) error {
	info, err := s.mod.ctx.GetSessionInfo(sess.h)
	if err != nil {
		return fmt.Errorf("pkcs11: session info: %w", err)
	}
	if info.State != p11.CKS_RO_USER_FUNCTIONS && info.State != p11.CKS_RW_USER_FUNCTIONS {
		return fmt.Errorf("pkcs11: session state %d: %w", info.State, p11.Error(p11.CKR_USER_NOT_LOGGED_IN))
	}
	return nil
}

func (s *Signer) findObjects(sess session, template []*p11.Attribute, max int) ([]p11.ObjectHandle, error) {
	if err := s.mod.ctx.FindObjectsInit(sess.h, template); err != nil {
		return nil, fmt.Errorf("pkcs11: find objects: %w", err)
	}
	objs, _, err := s.mod.ctx.FindObjects(sess.h, max)
	if ferr := s.mod.ctx.FindObjectsFinal(sess.h); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("pkcs11: find objects: %w", err)
	}
	return objs, nil
}

func (s *Signer) publicKey(sess session, h p11.ObjectHandle) (ed25519.PublicKey, error) {
	attrs, err := s.mod.ctx.GetAttributeValue(sess.h, h, []*p11.Attribute{p11.NewAttribute(p11.CKA_EC_POINT, nil)})
	if err != nil {
		return nil, fmt.Errorf("pkcs11: read public key: %w", err)
	}
	return decodePoint(attrs[0].Value)
}

// destroy removes objects a failed Make or Import left, as far as it can.
func (s *Signer) destroy(sess session, objs ...p11.ObjectHandle) {
	for _, o := range objs {
		_ = s.mod.ctx.DestroyObject(sess.h, o)
	}
}

// encodePoint is CKA_EC_POINT for an Ed25519 public key: the 32 bytes in
// a DER OCTET STRING.
func encodePoint(pub ed25519.PublicKey) []byte {
	return append([]byte{0x04, ed25519.PublicKeySize}, pub...)
}

// decodePoint reads CKA_EC_POINT: a DER OCTET STRING around the 32 bytes
// (SoftHSM2, PKCS#11 v3), or the bare 32 bytes some tokens answer.
func decodePoint(b []byte) (ed25519.PublicKey, error) {
	switch {
	case len(b) == 2+ed25519.PublicKeySize && b[0] == 0x04 && b[1] == ed25519.PublicKeySize:
		return ed25519.PublicKey(bytes.Clone(b[2:])), nil
	case len(b) == ed25519.PublicKeySize:
		return ed25519.PublicKey(bytes.Clone(b)), nil
	}
	return nil, fmt.Errorf("pkcs11: CKA_EC_POINT of %d bytes is not an Ed25519 public key", len(b))
}

package signer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Backend names where a wallet's key lives. A fleet may mix them: each
// wallet records its own, so changing the default for new wallets never
// strands an old one.
type Backend string

// The backends. Local is the HPKE envelope (the secret sealed in the
// database, opened by the worker for one signature); the others keep a
// non-exportable key outside the service and sign there.
const (
	Local  Backend = "local"
	PKCS11 Backend = "pkcs11"
	Vault  Backend = "vault"
	AWSKMS Backend = "awskms"
)

// Backends lists every backend, for validating configuration and rows.
var Backends = []Backend{Local, PKCS11, Vault, AWSKMS}

// ParseBackend reads a backend's name (WALLET_SIGNER, a row's signer).
func ParseBackend(s string) (Backend, error) {
	if s == "" {
		return Local, nil
	}
	b := Backend(s)
	if !slices.Contains(Backends, b) {
		return "", fmt.Errorf("unknown signer %q (want one of local, pkcs11, vault, awskms)", s)
	}
	return b, nil
}

// Keeper is a backend that makes and holds keys itself (an HSM, a KMS):
// it signs with them and never lets them out.
type Keeper interface {
	Signer
	// Backend is the backend this keeper is.
	Backend() Backend
	// Make makes a new non-exportable Ed25519 key named name (a wallet's
	// id) and returns it: public key, backend and the backend's reference.
	Make(ctx context.Context, name string) (Key, error)
	// Check reports whether the keeper can sign now, for readiness.
	Check(ctx context.Context) error
}

// UnavailableError is a backend that cannot sign or make keys now: a
// token absent, a wrong PIN, Vault sealed, KMS throttled. Nothing was
// signed; the request may be retried. Reason is safe to show a caller: it
// names the condition, never a secret.
type UnavailableError struct {
	Backend Backend
	Reason  string
	Err     error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s signer unavailable: %s", e.Backend, e.Reason)
	}
	return fmt.Sprintf("%s signer unavailable: %s: %v", e.Backend, e.Reason, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable reports whether err is, or wraps, an *UnavailableError.
func Unavailable(err error) (*UnavailableError, bool) {
	var u *UnavailableError
	ok := errors.As(err, &u)
	return u, ok
}

// Set signs with whichever backend holds a key: the local keystore for
// envelope keys, a keeper for the others. A key whose backend this process
// was not configured with is unavailable, never signed by another.
type Set struct {
	Local   *Keystore
	Keepers map[Backend]Keeper

	mu    sync.Mutex
	stats map[Backend]*signStats
}

type signStats struct {
	signs, errors int64
	avg           time.Duration // moving average of the signatures made
}

// Sign routes key to its backend, and times it.
func (s *Set) Sign(ctx context.Context, key Key, message []byte) ([]byte, error) {
	start := time.Now()
	sig, err := s.sign(ctx, key, message)
	s.observe(cmp.Or(key.Backend, Local), time.Since(start), err)
	return sig, err
}

func (s *Set) observe(b Backend, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats == nil {
		s.stats = map[Backend]*signStats{}
	}
	st := s.stats[b]
	if st == nil {
		st = &signStats{avg: d}
		s.stats[b] = st
	}
	if err != nil {
		st.errors++
		return
	}
	st.signs++
	st.avg += (d - st.avg) / 8
}

// Health is one backend's state, for readiness and metrics.
type Health struct {
	Backend Backend `json:"backend"`
	Up      bool    `json:"up"`
	// Reason is why it is not up (an UnavailableError's reason).
	Reason string `json:"reason,omitempty"`
	// CheckSeconds is how long the check took; SignSeconds the moving
	// average of the signatures made; Signs and Errors count them.
	CheckSeconds float64 `json:"check_seconds"`
	SignSeconds  float64 `json:"sign_seconds"`
	Signs        int64   `json:"signs"`
	Errors       int64   `json:"errors"`
}

// Health checks every backend of the set (the envelope is up when it
// holds a master key) with its signing figures.
func (s *Set) Health(ctx context.Context) []Health {
	var out []Health
	add := func(b Backend, check func(context.Context) error) {
		h := Health{Backend: b, Up: true}
		start := time.Now()
		if err := check(ctx); err != nil {
			h.Up, h.Reason = false, err.Error()
			if u, ok := Unavailable(err); ok {
				h.Reason = u.Reason
			}
		}
		h.CheckSeconds = time.Since(start).Seconds()
		s.mu.Lock()
		if st := s.stats[b]; st != nil {
			h.Signs, h.Errors, h.SignSeconds = st.signs, st.errors, st.avg.Seconds()
		}
		s.mu.Unlock()
		out = append(out, h)
	}
	if s.Local != nil {
		add(Local, func(context.Context) error { return nil })
	}
	for _, b := range Backends {
		if k, ok := s.Keepers[b]; ok {
			add(b, k.Check)
		}
	}
	return out
}

func (s *Set) sign(ctx context.Context, key Key, message []byte) ([]byte, error) {
	b := key.Backend
	if b == "" || b == Local {
		if s.Local == nil {
			return nil, &UnavailableError{Backend: Local, Reason: "no master key configured"}
		}
		return s.Local.Sign(ctx, key, message)
	}
	k, ok := s.Keepers[b]
	if !ok {
		return nil, &UnavailableError{Backend: b, Reason: "this worker is not configured for it"}
	}
	return k.Sign(ctx, key, message)
}

// Keeper is the keeper of backend b, if this process has one.
func (s *Set) Keeper(b Backend) (Keeper, bool) {
	k, ok := s.Keepers[b]
	return k, ok
}

// Maker makes a new key named name (a wallet's id) where the service keeps
// new keys, and returns it. The Sealer is one (an envelope, made in the
// API); a Keeper is another, reached through the worker (keymaker).
type Maker interface {
	Make(ctx context.Context, name string) (Key, error)
}

// Importer is a keeper that can take in an existing key (an HSM's
// C_CreateObject), so an envelope wallet moves into it keeping its address.
type Importer interface {
	Keeper
	// Import stores the Ed25519 seed as a non-exportable key named name.
	Import(ctx context.Context, name string, seed []byte) (Key, error)
}

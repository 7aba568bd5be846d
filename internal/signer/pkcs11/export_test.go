//go:build pkcs11

package pkcs11

import (
	"context"

	p11 "github.com/miekg/pkcs11"
)

// Do runs fn on one of s's sessions, as its own methods do.
func (s *Signer) Do(ctx context.Context, fn func(*p11.Ctx, p11.SessionHandle) error) error {
	return s.do(ctx, func(sess session) error { return fn(s.mod.ctx, sess.h) })
}

// Opened is how many sessions s opened since it last connected.
func (s *Signer) Opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// Reconnects is how many times s dropped its connection.
func (s *Signer) Reconnects() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Hold takes a pool session until release is called.
func (s *Signer) Hold(ctx context.Context) (release func(), err error) {
	sess, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	return func() { s.put(sess) }, nil
}

// Slot is the slot of s's token.
func (s *Signer) Slot() uint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slot
}

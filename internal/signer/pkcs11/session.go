//go:build pkcs11

package pkcs11

import (
	"context"
	"fmt"
	"time"

	p11 "github.com/miekg/pkcs11"
)

// retryConnect is how long a failed connection answers its error before
// the next caller tries again: a token that is down is not asked once per
// signature, and a network HSM's slow timeouts do not queue up.
const retryConnect = time.Second

// session is a pool session and the connection it was opened on.
type session struct {
	h   p11.SessionHandle
	gen uint64
}

// do runs fn on a pool session. When fn fails because the sessions are
// gone (the token restarted, the library was finalized, the login was
// lost), it reconnects and runs fn once more on a fresh session.
func (s *Signer) do(ctx context.Context, fn func(session) error) error {
	for attempt := 0; ; attempt++ {
		sess, err := s.get(ctx)
		if err != nil {
			return err
		}
		err = fn(sess)
		if err == nil || !reconnects(err) {
			s.put(sess)
			return err
		}
		s.drop(sess, err)
		if attempt > 0 {
			return unavailable("the token is not reachable", err)
		}
	}
}

// get takes a session, waiting for one while ctx allows and connecting
// (opening the first session and logging in) when not connected.
func (s *Signer) get(ctx context.Context) (session, error) {
	select {
	case s.tickets <- struct{}{}:
	case <-ctx.Done():
		return session{}, unavailable("every session is busy", ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.getLocked()
	if err != nil {
		<-s.tickets
	}
	return sess, err
}

func (s *Signer) getLocked() (session, error) {
	if s.closed {
		return session{}, ErrClosed
	}
	if s.refused != nil {
		return session{}, s.refused
	}
	if !s.connected {
		if time.Now().Before(s.retryAt) {
			return session{}, s.connectErr
		}
		if err := s.connect(); err != nil {
			s.connectErr, s.retryAt = err, time.Now().Add(retryConnect)
			return session{}, err
		}
	}
	if n := len(s.idle); n > 0 {
		h := s.idle[n-1]
		s.idle = s.idle[:n-1]
		return session{h: h, gen: s.gen}, nil
	}
	h, err := s.mod.ctx.OpenSession(s.slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	if err != nil {
		if reconnects(err) {
			s.disconnect(s.gen, err)
		}
		return session{}, unavailable("cannot open a session on the token", err)
	}
	s.opened++
	return session{h: h, gen: s.gen}, nil
}

// put returns a session that still works to the pool. One from before a
// reconnect is left alone: its handle is dead, and its number may already
// name a new session.
func (s *Signer) put(sess session) {
	s.mu.Lock()
	if sess.gen == s.gen && s.connected && !s.closed {
		s.idle = append(s.idle, sess.h)
	}
	s.mu.Unlock()
	<-s.tickets
}

// drop gives back a session whose connection failed with cause, and
// disconnects so the next get reconnects.
func (s *Signer) drop(sess session, cause error) {
	s.mu.Lock()
	if sess.gen == s.gen && s.connected && isRV(cause, p11.CKR_USER_NOT_LOGGED_IN) {
		s.idle = append(s.idle, sess.h) // still open: disconnect closes it
	}
	s.disconnect(sess.gen, cause)
	s.mu.Unlock()
	<-s.tickets
}

// connect finds the token, opens a session and logs in. s.mu is held.
// Login state belongs to the application and the token, not the session:
// one login serves every session the pool opens after it, for as long as
// one of them stays open.
func (s *Signer) connect() error {
	slot, err := findSlot(s.mod.ctx, s.cfg.TokenLabel)
	if isRV(err, p11.CKR_CRYPTOKI_NOT_INITIALIZED) {
		// The library was finalized under us (a restart of the module).
		if err := s.mod.initialize(); err != nil {
			return err
		}
		slot, err = findSlot(s.mod.ctx, s.cfg.TokenLabel)
	}
	if err != nil {
		return err
	}
	h, err := s.mod.ctx.OpenSession(slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	if err != nil {
		return unavailable("cannot open a session on the token", err)
	}
	if err := s.mod.ctx.Login(h, p11.CKU_USER, s.cfg.PIN); err != nil && !isRV(err, p11.CKR_USER_ALREADY_LOGGED_IN) {
		_ = s.mod.ctx.CloseSession(h)
		if reason, ok := pinRefused(err); ok {
			s.refused = unavailable(reason, fmt.Errorf("%w: %w", ErrPINRefused, err))
			return s.refused
		}
		return unavailable("cannot log in to the token", err)
	}
	s.slot, s.connected = slot, true
	s.idle = append(s.idle[:0], h)
	s.opened = 1
	s.keys = map[string]keyRef{}
	return nil
}

// disconnect forgets the connection of generation gen, if it is still the
// current one. s.mu is held. Idle sessions are closed only when the cause
// says they are still open (a lost login); after a restart their handles
// are dead and closing them could close someone else's new session.
func (s *Signer) disconnect(gen uint64, cause error) {
	if gen != s.gen || !s.connected {
		return // another caller reconnected already
	}
	if isRV(cause, p11.CKR_USER_NOT_LOGGED_IN) {
		for _, h := range s.idle {
			_ = s.mod.ctx.CloseSession(h)
		}
	}
	s.gen++
	s.connected = false
	s.idle = nil
	s.keys = nil
	s.retryAt = time.Time{}
}

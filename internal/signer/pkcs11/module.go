//go:build pkcs11

package pkcs11

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	p11 "github.com/miekg/pkcs11"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// PKCS#11 v3.0 names for Ed25519, which github.com/miekg/pkcs11 lacks.
const (
	ckkECEdwards           = 0x40   // CKK_EC_EDWARDS
	ckmECEdwardsKeyPairGen = 0x1055 // CKM_EC_EDWARDS_KEY_PAIR_GEN
	ckmEdDSA               = 0x1057 // CKM_EDDSA: without parameters, PureEdDSA Ed25519
)

// ed25519OID is CKA_EC_PARAMS for Ed25519: the DER OID 1.3.101.112
// (RFC 8410).
var ed25519OID = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}

// module is one loaded PKCS#11 library. C_Initialize is per process, not
// per caller: a second C_Initialize fails and one C_Finalize ends every
// caller's sessions, so Signers on the same library share one module and
// the last to close finalizes it.
type module struct {
	key  string
	ctx  *p11.Ctx
	refs int // guarded by modules.mu

	initMu sync.Mutex // serializes re-initializing after a C_Finalize
}

var modules = struct {
	mu sync.Mutex
	m  map[string]*module
}{m: map[string]*module{}}

// openModule loads and initializes the library at path, or takes another
// reference to it when it already is.
func openModule(path string) (*module, error) {
	key := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		key = p // two paths to one file are one library to dlopen
	}
	modules.mu.Lock()
	defer modules.mu.Unlock()
	if m := modules.m[key]; m != nil {
		m.refs++
		return m, nil
	}
	ctx := p11.New(path)
	if ctx == nil {
		return nil, unavailable("cannot load the PKCS#11 module "+path, nil)
	}
	m := &module{key: key, ctx: ctx, refs: 1}
	if err := m.initialize(); err != nil {
		ctx.Destroy()
		return nil, err
	}
	modules.m[key] = m
	return m, nil
}

// initialize calls C_Initialize; a library someone else in the process
// already initialized is ready all the same.
func (m *module) initialize() error {
	m.initMu.Lock()
	defer m.initMu.Unlock()
	if err := m.ctx.Initialize(); err != nil && !isRV(err, p11.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
		return unavailable("the PKCS#11 module did not initialize", err)
	}
	return nil
}

// release drops a reference; the last one finalizes and unloads.
func (m *module) release() {
	modules.mu.Lock()
	defer modules.mu.Unlock()
	m.refs--
	if m.refs > 0 {
		return
	}
	delete(modules.m, m.key)
	_ = m.ctx.Finalize()
	m.ctx.Destroy()
}

// initTokenMu serializes InitToken: two callers must not pick the same
// free slot.
var initTokenMu sync.Mutex

// InitToken initializes the first uninitialized token of module with
// label, its security officer PIN and its user PIN. It is for SoftHSM2
// and development tokens (a production HSM's partitions are made with its
// own tools). SoftHSM2 reads its token directory only at C_Initialize, so
// a token made by softhsm2-util is invisible to a process that already
// loaded the module; one made here is visible at once.
func InitToken(modulePath, label, soPIN, pin string) error {
	if label == "" || len(label) > 32 {
		return fmt.Errorf("pkcs11: token label %q: want 1 to 32 bytes", label)
	}
	m, err := openModule(modulePath)
	if err != nil {
		return err
	}
	defer m.release()
	initTokenMu.Lock()
	defer initTokenMu.Unlock()

	if _, err := findSlot(m.ctx, label); err == nil {
		return fmt.Errorf("pkcs11: a token labelled %q exists", label)
	}
	slots, err := m.ctx.GetSlotList(true)
	if err != nil {
		return fmt.Errorf("pkcs11: list slots: %w", err)
	}
	free, found := uint(0), false
	for _, id := range slots {
		ti, err := m.ctx.GetTokenInfo(id)
		if err == nil && ti.Flags&p11.CKF_TOKEN_INITIALIZED == 0 {
			free, found = id, true
			break
		}
	}
	if !found {
		return errors.New("pkcs11: the module has no uninitialized token")
	}
	if err := m.ctx.InitToken(free, soPIN, label); err != nil {
		return fmt.Errorf("pkcs11: initialize token: %w", err)
	}
	// SoftHSM2 moves an initialized token to a slot named for its serial.
	slot, err := findSlot(m.ctx, label)
	if err != nil {
		return err
	}
	h, err := m.ctx.OpenSession(slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	if err != nil {
		return fmt.Errorf("pkcs11: open session: %w", err)
	}
	defer func() { _ = m.ctx.CloseSession(h) }()
	if err := m.ctx.Login(h, p11.CKU_SO, soPIN); err != nil {
		return fmt.Errorf("pkcs11: log in as security officer: %w", err)
	}
	defer func() { _ = m.ctx.Logout(h) }()
	if err := m.ctx.InitPIN(h, pin); err != nil {
		return fmt.Errorf("pkcs11: set the user PIN: %w", err)
	}
	return nil
}

// findSlot is the slot of the one initialized token labelled label.
func findSlot(ctx *p11.Ctx, label string) (uint, error) {
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		return 0, unavailable("cannot list the module's tokens", err)
	}
	var found []uint
	for _, id := range slots {
		ti, err := ctx.GetTokenInfo(id)
		if err != nil {
			continue // a token going away while we look: not ours to report
		}
		if ti.Label == label && ti.Flags&p11.CKF_TOKEN_INITIALIZED != 0 {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return 0, unavailable(fmt.Sprintf("no token labelled %q", label), nil)
	case 1:
		return found[0], nil
	default:
		return 0, unavailable(fmt.Sprintf("%d tokens labelled %q", len(found), label), nil)
	}
}

func unavailable(reason string, err error) *signer.UnavailableError {
	return &signer.UnavailableError{Backend: signer.PKCS11, Reason: reason, Err: err}
}

// isRV reports whether err is the PKCS#11 return value rv.
func isRV(err error, rv uint) bool {
	var e p11.Error
	return errors.As(err, &e) && uint(e) == rv
}

// reconnects reports whether err means the sessions (or the token, or the
// library's state) are gone: drop them, open new ones, log in again.
func reconnects(err error) bool {
	var e p11.Error
	if !errors.As(err, &e) {
		return false
	}
	switch uint(e) {
	case p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED,
		p11.CKR_DEVICE_REMOVED, p11.CKR_TOKEN_NOT_PRESENT, p11.CKR_DEVICE_ERROR,
		p11.CKR_USER_NOT_LOGGED_IN, p11.CKR_CRYPTOKI_NOT_INITIALIZED,
		p11.CKR_SLOT_ID_INVALID, p11.CKR_TOKEN_NOT_RECOGNIZED:
		return true
	}
	return false
}

// pinRefused reports whether a login failed for the PIN itself: retrying
// it can only bring a real token closer to locking the PIN for good.
func pinRefused(err error) (string, bool) {
	var e p11.Error
	if !errors.As(err, &e) {
		return "", false
	}
	switch uint(e) {
	case p11.CKR_PIN_INCORRECT, p11.CKR_PIN_INVALID, p11.CKR_PIN_LEN_RANGE:
		return "the token refused the PIN", true
	case p11.CKR_PIN_LOCKED:
		return "the token's user PIN is locked", true
	case p11.CKR_PIN_EXPIRED:
		return "the token's user PIN has expired", true
	case p11.CKR_USER_PIN_NOT_INITIALIZED:
		return "the token has no user PIN", true
	}
	return "", false
}

// Package vault keeps wallet keys in the Transit secrets engine of
// HashiCorp Vault or OpenBao. Each wallet's key is an Ed25519 transit key
// named by the wallet's id, made non-exportable and without plaintext
// backup: Vault signs a message and answers the signature, and the private
// key never leaves it.
//
// Signing pins key version 1. A wallet's address is its public key, so a
// rotated transit key would be another address: a rotation of a wallet's
// key in Vault does not move the wallet, it is ignored.
package vault

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// DefaultMount is where the Transit engine is mounted unless configured.
const DefaultMount = "transit"

// DefaultTimeout bounds one request to Vault unless configured.
const DefaultTimeout = 5 * time.Second

// keyVersion is the transit key version every signature is made with.
const keyVersion = 1

// Config says which Vault to use and how.
type Config struct {
	// Address is Vault's URL (VAULT_ADDR), such as https://vault:8200.
	Address string
	// Token is the Vault token (VAULT_TOKEN or VAULT_TOKEN_FILE). Empty
	// sends none, for a Vault Agent or Proxy that adds its own.
	Token string
	// Mount is the Transit engine's mount path (VAULT_TRANSIT_MOUNT); ""
	// is DefaultMount.
	Mount string
	// Namespace is the Vault Enterprise or OpenBao namespace
	// (VAULT_NAMESPACE); "" is the root.
	Namespace string
	// Timeout bounds each request; 0 is DefaultTimeout.
	Timeout time.Duration
}

// ErrNameInUse means a transit key by the wallet's name exists already:
// Make never adopts a key it did not make.
var ErrNameInUse = errors.New("a transit key by this name exists already")

// Signer makes and signs with Ed25519 keys in Vault's Transit engine. It
// is a signer.Keeper and safe for concurrent use.
type Signer struct {
	client *api.Client
	mount  string
	token  string
}

var _ signer.Keeper = (*Signer)(nil)

// New makes a Signer for cfg. It does not contact Vault: Check does.
//
// TLS follows Vault's own environment (VAULT_CACERT, VAULT_CAPATH,
// VAULT_CLIENT_CERT, VAULT_CLIENT_KEY, VAULT_TLS_SERVER_NAME); the address,
// token, namespace, timeout and retries are cfg's, whatever the environment
// says. A request is made once, never retried: a sealed or throttling
// Vault answers the caller at once, and the caller's queue retries later.
func New(cfg Config) (*Signer, error) {
	if cfg.Address == "" {
		return nil, errors.New("vault: no address (VAULT_ADDR)")
	}
	u, err := url.Parse(cfg.Address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("vault: address %q is not an http(s) URL", cfg.Address)
	}
	mount := strings.Trim(cfg.Mount, "/")
	if mount == "" {
		mount = DefaultMount
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	conf := api.DefaultConfig()
	if conf.Error != nil {
		return nil, fmt.Errorf("vault: client configuration from the environment: %w", conf.Error)
	}
	conf.Address = cfg.Address
	conf.Timeout = timeout
	conf.MaxRetries = 0
	client, err := api.NewClient(conf)
	if err != nil {
		return nil, fmt.Errorf("vault: client: %w", err)
	}
	token := strings.TrimSpace(cfg.Token)
	client.SetToken(token)
	if ns := strings.Trim(cfg.Namespace, "/"); ns != "" {
		client.SetNamespace(ns)
	} else {
		client.ClearNamespace()
	}
	return &Signer{client: client, mount: mount, token: token}, nil
}

// Backend is signer.Vault.
func (s *Signer) Backend() signer.Backend { return signer.Vault }

// Make makes a non-exportable Ed25519 transit key named name and returns
// its version 1 public key. It refuses a name already in use
// (ErrNameInUse). Should Vault fail after making the key, the name stays
// taken: a retry is refused rather than handed a key made for another try.
func (s *Signer) Make(ctx context.Context, name string) (signer.Key, error) {
	if err := checkName(name); err != nil {
		return signer.Key{}, err
	}
	path := s.mount + "/keys/" + name
	existing, err := s.client.Logical().ReadWithContext(ctx, path)
	if err != nil {
		return signer.Key{}, s.failure(ctx, "read key", err)
	}
	if existing != nil {
		return signer.Key{}, fmt.Errorf("vault: make key %s: %w", name, ErrNameInUse)
	}
	made, err := s.client.Logical().WriteWithContext(ctx, path, map[string]any{
		"type":                   "ed25519",
		"exportable":             false,
		"allow_plaintext_backup": false,
	})
	if err != nil {
		return signer.Key{}, s.failure(ctx, "make key", err)
	}
	if made != nil {
		for _, w := range made.Warnings {
			// Vault answers a create of an existing key with the key
			// and this warning: another maker won the race.
			if strings.Contains(w, "already existed") {
				return signer.Key{}, fmt.Errorf("vault: make key %s: %w", name, ErrNameInUse)
			}
		}
	}
	if made == nil || made.Data["keys"] == nil {
		// Older Vaults answer a create with 204 and no body.
		made, err = s.client.Logical().ReadWithContext(ctx, path)
		if err != nil {
			return signer.Key{}, s.failure(ctx, "read key", err)
		}
		if made == nil {
			return signer.Key{}, fmt.Errorf("vault: transit key %s is missing after it was made", name)
		}
	}
	pub, err := publicKey(made.Data)
	if err != nil {
		return signer.Key{}, fmt.Errorf("vault: transit key %s: %w", name, err)
	}
	return signer.Key{Public: pub, Backend: signer.Vault, Ref: name}, nil
}

// publicKey reads version 1's public key from a read key answer, having
// checked the key is what Make asked for.
func publicKey(data map[string]any) (ed25519.PublicKey, error) {
	if t, _ := data["type"].(string); t != "ed25519" {
		return nil, fmt.Errorf("type is %q, not ed25519", t)
	}
	if b, _ := data["exportable"].(bool); b {
		return nil, errors.New("key is exportable")
	}
	if b, _ := data["allow_plaintext_backup"].(bool); b {
		return nil, errors.New("key allows plaintext backup")
	}
	if b, _ := data["derived"].(bool); b {
		return nil, errors.New("key is derived")
	}
	keys, _ := data["keys"].(map[string]any)
	version, _ := keys["1"].(map[string]any)
	encoded, _ := version["public_key"].(string)
	pub, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("version 1 has no 32-byte public key")
	}
	return ed25519.PublicKey(pub), nil
}

// Sign signs message with key's transit key, version 1, and returns the
// 64-byte signature, verified against key.Public.
func (s *Signer) Sign(ctx context.Context, key signer.Key, message []byte) ([]byte, error) {
	if key.Backend != signer.Vault {
		return nil, fmt.Errorf("vault: key is held by the %q backend", key.Backend)
	}
	if err := checkName(key.Ref); err != nil {
		return nil, err
	}
	if len(key.Public) != ed25519.PublicKeySize {
		return nil, errors.New("vault: key has no public key to verify against")
	}
	answer, err := s.client.Logical().WriteWithContext(ctx, s.mount+"/sign/"+key.Ref, map[string]any{
		"input":       base64.StdEncoding.EncodeToString(message),
		"key_version": keyVersion,
	})
	if err != nil {
		return nil, s.failure(ctx, "sign", err)
	}
	if answer == nil {
		return nil, fmt.Errorf("vault: sign with %s: empty answer", key.Ref)
	}
	encoded, _ := answer.Data["signature"].(string)
	sig, err := parseSignature(encoded)
	if err != nil {
		return nil, fmt.Errorf("vault: sign with %s: %w", key.Ref, err)
	}
	if !ed25519.Verify(key.Public, message, sig) {
		return nil, fmt.Errorf("vault: sign with %s: %w", key.Ref, signer.ErrBadSignature)
	}
	return sig, nil
}

// parseSignature reads "vault:v1:<base64>", refusing any other version.
func parseSignature(s string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(s, fmt.Sprintf("vault:v%d:", keyVersion))
	if !ok {
		return nil, errors.New("signature is not of key version 1")
	}
	sig, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, errors.New("signature is not 64 bytes of base64")
	}
	return sig, nil
}

// Check asks sys/health whether Vault can sign now: an uninitialized,
// sealed or standby node is unavailable.
func (s *Signer) Check(ctx context.Context) error {
	h, err := s.client.Sys().HealthWithContext(ctx)
	if err != nil {
		return s.failure(ctx, "health", err)
	}
	switch {
	case !h.Initialized:
		return unavailable("vault is not initialized", nil)
	case h.Sealed:
		return unavailable("vault is sealed", nil)
	case h.Standby:
		return unavailable("this vault node is a standby", nil)
	}
	return nil
}

// failure translates a request's error: what means Vault cannot answer now
// becomes *signer.UnavailableError; the rest (a missing key, a bad
// request) an error. Neither carries the token.
func (s *Signer) failure(ctx context.Context, op string, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return fmt.Errorf("vault: %s: %w", op, s.scrub(err))
	}
	var re *api.ResponseError
	if errors.As(err, &re) {
		msgs := make([]string, len(re.Errors))
		for i, e := range re.Errors {
			msgs[i] = strings.Join(strings.Fields(e), " ")
		}
		summary := s.scrub(fmt.Errorf("vault %s answered %d: %s", op, re.StatusCode, strings.Join(msgs, "; ")))
		switch code := re.StatusCode; {
		case code == 503 && mentions(msgs, "sealed"):
			return unavailable("vault is sealed", summary)
		case code == 403:
			return unavailable("vault denied permission: the token is expired, revoked or lacks the policy", summary)
		case code == 429:
			return unavailable("vault is limiting the rate of requests", summary)
		case code == 412:
			return unavailable("vault is not yet consistent", summary)
		case code >= 500:
			return unavailable("vault server error", summary)
		}
		return summary
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return unavailable("vault did not answer in time", s.scrub(err))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return unavailable("vault did not answer in time", s.scrub(err))
		}
		return unavailable("cannot reach vault", s.scrub(err))
	}
	return fmt.Errorf("vault: %s: %w", op, s.scrub(err))
}

func unavailable(reason string, err error) error {
	return &signer.UnavailableError{Backend: signer.Vault, Reason: reason, Err: err}
}

func mentions(errs []string, word string) bool {
	for _, e := range errs {
		if strings.Contains(strings.ToLower(e), word) {
			return true
		}
	}
	return false
}

// scrub hides the token should it appear in an error's text (a server or
// proxy echoing a header back). The result matches what err matched for
// errors.Is, but does not unwrap to err's text.
func (s *Signer) scrub(err error) error {
	if err == nil || s.token == "" || !strings.Contains(err.Error(), s.token) {
		return err
	}
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), s.token, "[token]"), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }

func (e *scrubbed) Is(target error) bool { return errors.Is(e.err, target) }

// validName is what a wallet id may be to name a transit key: a path
// segment with nothing Vault's router would read as more.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("vault: %q cannot name a transit key (letters, digits, - and _, at most 128)", name)
	}
	return nil
}

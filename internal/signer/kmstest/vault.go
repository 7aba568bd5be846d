package kmstest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TransitMount is where the Vault test server mounts the Transit engine.
const TransitMount = "transit"

// Vault is an in-memory Vault with the Transit secrets engine mounted at
// TransitMount: the part of Vault's HTTP API (v1) a signer uses to make
// Ed25519 keys, read their public keys and sign with them, answered as
// Vault documents it ({"data": {...}} on success, {"errors": [...]} with
// Vault's status codes otherwise). Writes are accepted as PUT or POST, as
// Vault does. One token is accepted; sys/health needs none.
type Vault struct {
	// Addr is the server's address, as VAULT_ADDR.
	Addr string
	// Token is the only token the server accepts in X-Vault-Token.
	Token string

	mu        sync.Mutex
	keys      map[string]*transitKey
	sealed    bool
	denied    bool
	standby   bool
	namespace string

	signed   atomic.Int64
	requests atomic.Int64
}

type transitKey struct {
	exportable      bool
	plaintextBackup bool
	versions        []ed25519.PrivateKey // versions[v-1] is version v
	created         []time.Time
}

// TransitKey is what the Vault test server holds for a key, for a test's
// assertions. It carries public keys only.
type TransitKey struct {
	Exportable           bool
	AllowPlaintextBackup bool
	// Public[v-1] is the public key of version v; its length is the
	// latest version.
	Public []ed25519.PublicKey
}

// NewVault starts a Vault test server, unsealed and holding no keys, with a
// fresh random token. It stops when the test ends.
func NewVault(t testing.TB) *Vault {
	t.Helper()
	v := &Vault{Token: "hvs." + randomString(24), keys: map[string]*transitKey{}}
	srv := httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(srv.Close)
	v.Addr = srv.URL
	return v
}

// Seal seals (true) or unseals (false) the server. Sealed, every request
// but sys/health answers 503 {"errors":["Vault is sealed"]}.
func (v *Vault) Seal(sealed bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sealed = sealed
}

// Deny makes every request that needs a token answer 403 permission
// denied, as for a revoked token or one whose policy lacks the path.
func (v *Vault) Deny(denied bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.denied = denied
}

// Standby makes the node report itself a standby in sys/health.
func (v *Vault) Standby(standby bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.standby = standby
}

// RequireNamespace makes requests outside namespace ns (X-Vault-Namespace)
// answer 403, as paths in another namespace would. "" is the root.
func (v *Vault) RequireNamespace(ns string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.namespace = strings.Trim(ns, "/")
}

// Signed counts the signatures the server has made.
func (v *Vault) Signed() int { return int(v.signed.Load()) }

// Requests counts the HTTP requests the server has answered.
func (v *Vault) Requests() int { return int(v.requests.Load()) }

// Key reports what the server holds for the key named name.
func (v *Vault) Key(name string) (TransitKey, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		return TransitKey{}, false
	}
	tk := TransitKey{Exportable: k.exportable, AllowPlaintextBackup: k.plaintextBackup}
	for _, priv := range k.versions {
		tk.Public = append(tk.Public, priv.Public().(ed25519.PublicKey))
	}
	return tk, true
}

// Rotate adds a new version to the key named name, as
// POST /v1/transit/keys/:name/rotate does.
func (v *Vault) Rotate(name string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		return fmt.Errorf("no transit key %q", name)
	}
	return k.rotate()
}

func (k *transitKey) rotate() error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	k.versions = append(k.versions, priv)
	k.created = append(k.created, time.Now().UTC())
	return nil
}

func (v *Vault) serve(w http.ResponseWriter, r *http.Request) {
	v.requests.Add(1)
	path, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		vaultError(w, http.StatusNotFound)
		return
	}
	if path == "sys/health" {
		v.health(w, r)
		return
	}

	v.mu.Lock()
	sealed, denied, ns := v.sealed, v.denied, v.namespace
	v.mu.Unlock()
	if sealed {
		vaultError(w, http.StatusServiceUnavailable, "Vault is sealed")
		return
	}
	if denied || r.Header.Get("X-Vault-Token") != v.Token ||
		strings.Trim(r.Header.Get("X-Vault-Namespace"), "/") != ns {
		vaultError(w, http.StatusForbidden, "permission denied")
		return
	}

	rest, ok := strings.CutPrefix(path, TransitMount+"/")
	if !ok {
		vaultError(w, http.StatusNotFound, fmt.Sprintf("no handler for route %q. route entry not found.", path))
		return
	}
	write := r.Method == http.MethodPost || r.Method == http.MethodPut
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2 && parts[0] == "keys" && r.Method == http.MethodGet:
		v.readKey(w, parts[1])
	case len(parts) == 2 && parts[0] == "keys" && write:
		v.createKey(w, r, parts[1])
	case len(parts) == 2 && parts[0] == "keys" && r.Method == http.MethodDelete:
		vaultError(w, http.StatusBadRequest, "error deleting policy "+parts[1]+": deletion is not allowed for this policy")
	case len(parts) == 3 && parts[0] == "keys" && parts[2] == "rotate" && write:
		v.rotateKey(w, parts[1])
	case (len(parts) == 2 || len(parts) == 3) && parts[0] == "sign" && write:
		v.sign(w, r, parts[1])
	case (len(parts) == 3 || len(parts) == 4) && parts[0] == "export" && r.Method == http.MethodGet:
		v.export(w, parts[1], parts[2], parts[3:])
	default:
		vaultError(w, http.StatusMethodNotAllowed)
	}
}

// health answers sys/health: 200 active, 429 standby, 503 sealed, each
// overridable by the standbycode and sealedcode parameters, as Vault does.
func (v *Vault) health(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	sealed, standby := v.sealed, v.standby
	v.mu.Unlock()
	status := http.StatusOK
	switch {
	case sealed:
		status = statusParam(r, "sealedcode", http.StatusServiceUnavailable)
	case standby:
		status = statusParam(r, "standbycode", http.StatusTooManyRequests)
	}
	body := map[string]any{
		"initialized":                  true,
		"sealed":                       sealed,
		"standby":                      standby,
		"performance_standby":          false,
		"replication_performance_mode": "disabled",
		"replication_dr_mode":          "disabled",
		"server_time_utc":              time.Now().Unix(),
		"version":                      "1.21.0",
		"enterprise":                   false,
		"echo_duration_ms":             0,
		"clock_skew_ms":                0,
	}
	if !sealed {
		body["cluster_name"] = "vault-cluster-kmstest"
		body["cluster_id"] = "5f0e7b2c-0000-4000-8000-000000000000"
	}
	writeJSON(w, "application/json", status, body)
}

func statusParam(r *http.Request, name string, def int) int {
	if s := r.URL.Query().Get(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

func (v *Vault) readKey(w http.ResponseWriter, name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		vaultError(w, http.StatusNotFound)
		return
	}
	vaultData(w, keyPolicy(name, k))
}

// createKey makes a key, or, as Vault does, answers the existing one
// unchanged with a warning.
func (v *Vault) createKey(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Type                 string `json:"type"`
		Exportable           bool   `json:"exportable"`
		AllowPlaintextBackup bool   `json:"allow_plaintext_backup"`
		Derived              bool   `json:"derived"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[name]; ok {
		vaultData(w, keyPolicy(name, k), fmt.Sprintf("key %s already existed", name))
		return
	}
	if req.Type == "" {
		req.Type = "aes256-gcm96"
	}
	if req.Type != "ed25519" {
		vaultError(w, http.StatusBadRequest, fmt.Sprintf("this test server makes ed25519 keys only, not %v", req.Type))
		return
	}
	if req.Derived {
		vaultError(w, http.StatusBadRequest, "this test server makes no derived keys")
		return
	}
	k := &transitKey{exportable: req.Exportable, plaintextBackup: req.AllowPlaintextBackup}
	if err := k.rotate(); err != nil {
		vaultError(w, http.StatusInternalServerError, err.Error())
		return
	}
	v.keys[name] = k
	vaultData(w, keyPolicy(name, k))
}

func (v *Vault) rotateKey(w http.ResponseWriter, name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		vaultError(w, http.StatusBadRequest, "key not found")
		return
	}
	if err := k.rotate(); err != nil {
		vaultError(w, http.StatusInternalServerError, err.Error())
		return
	}
	vaultData(w, keyPolicy(name, k))
}

// sign signs one input with the requested version (0: the latest). The
// ed25519 type ignores the hash algorithm, as Vault's does.
func (v *Vault) sign(w http.ResponseWriter, r *http.Request, name string) {
	var req struct {
		Input      *string         `json:"input"`
		KeyVersion json.Number     `json:"key_version"`
		Context    string          `json:"context"`
		BatchInput json.RawMessage `json:"batch_input"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if req.BatchInput != nil {
		vaultError(w, http.StatusBadRequest, "this test server signs one input at a time")
		return
	}
	version := 0
	if req.KeyVersion != "" {
		n, err := strconv.Atoi(req.KeyVersion.String())
		if err != nil {
			vaultError(w, http.StatusBadRequest, "key_version: "+err.Error())
			return
		}
		version = n
	}
	input := ""
	if req.Input != nil {
		input = *req.Input
	}
	message, err := base64.StdEncoding.DecodeString(input)
	if err != nil {
		vaultError(w, http.StatusBadRequest, "unable to decode input as base64: "+err.Error())
		return
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		vaultError(w, http.StatusBadRequest, "encryption key not found")
		return
	}
	latest := len(k.versions)
	if version <= 0 {
		version = latest
	}
	if version > latest {
		vaultError(w, http.StatusBadRequest, "requested version for signing is greater than the latest key version")
		return
	}
	sig := ed25519.Sign(k.versions[version-1], message)
	v.signed.Add(1)
	vaultData(w, map[string]any{
		"signature": fmt.Sprintf("vault:v%d:%s", version, base64.StdEncoding.EncodeToString(sig)),
	})
}

// export refuses a key not made exportable, as Vault does; an exportable
// one is answered with its private keys, base64.
func (v *Vault) export(w http.ResponseWriter, kind, name string, version []string) {
	if kind != "signing-key" && kind != "encryption-key" && kind != "hmac-key" {
		vaultError(w, http.StatusBadRequest, "invalid export type: "+kind)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.keys[name]
	if !ok {
		vaultError(w, http.StatusNotFound)
		return
	}
	if !k.exportable {
		vaultError(w, http.StatusBadRequest, "private key material is not exportable")
		return
	}
	if kind != "signing-key" {
		vaultError(w, http.StatusBadRequest, kind+" is not available for key type ed25519")
		return
	}
	keys := map[string]string{}
	for i, priv := range k.versions {
		ver := strconv.Itoa(i + 1)
		if len(version) == 1 && version[0] != ver && !(version[0] == "latest" && i == len(k.versions)-1) {
			continue
		}
		keys[ver] = base64.StdEncoding.EncodeToString(priv)
	}
	vaultData(w, map[string]any{"name": name, "type": "ed25519", "keys": keys})
}

// keyPolicy is a key as Vault's read key endpoint answers it: for an
// asymmetric key, each version's public key and creation time.
func keyPolicy(name string, k *transitKey) map[string]any {
	keys := map[string]any{}
	for i, priv := range k.versions {
		keys[strconv.Itoa(i+1)] = map[string]any{
			"name":              "ed25519",
			"public_key":        base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)),
			"creation_time":     k.created[i].Format(time.RFC3339Nano),
			"certificate_chain": "",
		}
	}
	return map[string]any{
		"name":                   name,
		"type":                   "ed25519",
		"derived":                false,
		"deletion_allowed":       false,
		"min_available_version":  0,
		"min_decryption_version": 1,
		"min_encryption_version": 0,
		"latest_version":         len(k.versions),
		"exportable":             k.exportable,
		"allow_plaintext_backup": k.plaintextBackup,
		"supports_encryption":    false,
		"supports_decryption":    false,
		"supports_signing":       true,
		"supports_derivation":    true,
		"auto_rotate_period":     0,
		"imported_key":           false,
		"keys":                   keys,
	}
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		vaultError(w, http.StatusBadRequest, err.Error())
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return true
	}
	if err := json.Unmarshal(body, v); err != nil {
		vaultError(w, http.StatusBadRequest, "failed to parse JSON input: "+err.Error())
		return false
	}
	return true
}

func vaultData(w http.ResponseWriter, data map[string]any, warnings ...string) {
	writeJSON(w, "application/json", http.StatusOK, map[string]any{
		"request_id":     uuid.NewString(),
		"lease_id":       "",
		"renewable":      false,
		"lease_duration": 0,
		"data":           data,
		"wrap_info":      nil,
		"warnings":       warnings,
		"auth":           nil,
		"mount_type":     "transit",
	})
}

func vaultError(w http.ResponseWriter, status int, errs ...string) {
	if errs == nil {
		errs = []string{}
	}
	writeJSON(w, "application/json", status, map[string]any{"errors": errs})
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hpke"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"
	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/webhook"
)

// syncBuffer is a bytes.Buffer many goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsHoldNoSecrets captures every log line of the API and the worker
// (debug level, JSON) through an end-to-end run (sends, approvals, keys
// made, rotated and revoked, webhooks failing then delivered, secrets
// rotated, bad keys, a Postgres and a Redis outage) and finds in it no API
// key, no wallet secret in any usual encoding, no webhook secret, no
// master key. Every line is JSON; every request's lines carry its id.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, envOpts{proxied: true, log: log})
	e.startWorker(retryFast)
	secrets := map[string]string{"operator key": e.key, "master key": e.masterKey, "slack signing secret": slackSecret}
	addWebhookSecret := func(name, s string) {
		secrets[name] = s
		secrets[name+" (unprefixed)"] = strings.TrimPrefix(s, webhook.SecretPrefix)
	}

	// Webhooks: the first deliveries fail (logged), then succeed.
	hook := newReceiver(t, func(n int, _ received) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	epID, whsec := e.createEndpoint(hook.URL, "tx.sent", "approval.pending", "approval.approved", "approval.rejected")
	addWebhookSecret("webhook secret", whsec)
	status, rot := e.do("POST", endpointsPath+"/"+epID+"/rotate-secret", e.key, nil)
	if status != 200 {
		t.Fatalf("rotate secret: %d %v", status, rot)
	}
	addWebhookSecret("rotated webhook secret", rot["secret"].(string))

	// Payments: sent, parked and approved, parked and rejected, idempotent.
	id, _ := e.agent(map[string]any{"approval_threshold_usdc": 2}, 50_000_000)
	send := fmt.Sprintf(sendPath, id)
	if status, body := e.do("POST", send, e.key, map[string]any{"to": newAddress(), "amount": 1}); status != 200 {
		t.Fatalf("send: %d %v", status, body)
	}
	_, approver := e.adminKey()
	secrets["approver key"] = approver
	if status, body := e.approve(e.park(id, newAddress(), 3), approver, map[string]any{"note": "ok"}); status != 200 {
		t.Fatalf("approve: %d %v", status, body)
	}
	if status, body := e.reject(e.park(id, newAddress(), 3), e.key, nil); status != 200 {
		t.Fatalf("reject: %d %v", status, body)
	}
	idem := http.Header{"Idempotency-Key": {"order-7"}}
	to := newAddress()
	for range 2 {
		if status, raw, _ := e.request("POST", send, e.key, map[string]any{"to": to, "amount": 1}, idem); status != 200 {
			t.Fatalf("idempotent send: %d %s", status, raw)
		}
	}
	e.do("POST", send+"/preview", e.key, map[string]any{"to": to, "amount": 100})

	// Keys: made, rotated, used, revoked; and keys that do not exist.
	agentKeyID, agentKey := e.agentKey()
	secrets["agent key"] = agentKey
	status, rk := e.do("POST", "/api/public/v1/keys/"+agentKeyID+"/rotate", e.key, nil)
	if status != 200 {
		t.Fatalf("rotate key: %d %v", status, rk)
	}
	secrets["rotated key"] = rk["key"].(string)
	e.do("GET", "/api/public/v1/agents", rk["key"].(string), nil)
	e.do("GET", "/api/public/v1/agents", agentKey, nil)
	e.do("DELETE", "/api/public/v1/keys/"+rk["id"].(string), e.key, nil)
	unknown := auth.TestPrefix + base58.Encode([]byte(rand.Text()))
	secrets["unknown key"] = unknown
	e.do("GET", "/api/public/v1/agents", unknown, nil)
	e.do("GET", "/api/public/v1/agents", secrets["rotated key"], nil)

	// A caller's request id is echoed and marks that request's lines; one
	// is made up when none (or a bad one) is sent.
	_, _, h := e.request("GET", "/api/public/v1/agents", e.key, nil, http.Header{httpapi.RequestIDHeader: {"trace-7.a:b_c"}})
	if got := h.Get(httpapi.RequestIDHeader); got != "trace-7.a:b_c" {
		t.Fatalf("request id echoed as %q", got)
	}
	for _, bad := range []string{"", "with space", strings.Repeat("a", 129), "naïve"} {
		_, _, h := e.request("GET", "/api/public/v1/agents", e.key, nil, http.Header{httpapi.RequestIDHeader: {bad}})
		if got := h.Get(httpapi.RequestIDHeader); uuid.Validate(got) != nil {
			t.Fatalf("request id %q answered as %q, want a new uuid", bad, got)
		}
	}

	// Outages: the warnings they cause carry the request's id.
	for _, o := range []struct {
		p     *proxy
		id    string
		event string
	}{{e.pgProxy, "outage-pg", "authentication unavailable"}, {e.redisProxy, "outage-redis", "rate limiter unavailable"}} {
		o.p.set(proxyRefuse)
		if status, raw, _ := e.request("GET", "/api/public/v1/agents", e.key, nil, http.Header{httpapi.RequestIDHeader: {o.id}}); status != 503 {
			t.Fatalf("%s: %d %s", o.id, status, raw)
		}
		o.p.set(proxyUp)
		waitfor.True(t, "service again", func() bool {
			status, _ := e.do("GET", "/api/public/v1/agents", e.key, nil)
			return status == 200
		})
		if lines := linesWith(buf.String(), `"request_id":"`+o.id+`"`); !strings.Contains(lines, o.event) || !strings.Contains(lines, `"status":503`) {
			t.Fatalf("%s: lines of the request:\n%s", o.id, lines)
		}
	}

	waitfor.True(t, "every webhook delivered", func() bool {
		for _, d := range e.deliveries(e.key, epID, "") {
			if d["status"] != "succeeded" {
				return false
			}
		}
		return true
	})

	// Every wallet's secret, in every usual encoding.
	var wallets []struct {
		ID     uuid.UUID
		Pubkey string
	}
	if err := e.db.NewRaw("SELECT id, pubkey FROM wallets").Scan(context.Background(), &wallets); err != nil {
		t.Fatal(err)
	}
	if len(wallets) == 0 {
		t.Fatal("no wallets")
	}
	for _, w := range wallets {
		sealed, err := wallet.SealedSecret(context.Background(), e.db, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		pub := sol.MustPublicKeyFromBase58(w.Pubkey)
		secret := openSealedSecret(t, e.masterKey, sealed, ed25519.PublicKey(pub.Bytes()))
		for form, v := range map[string]string{
			"base58": base58.Encode(secret), "base58 seed": base58.Encode(secret.Seed()),
			"hex": hex.EncodeToString(secret), "hex seed": hex.EncodeToString(secret.Seed()),
			"base64": base64.StdEncoding.EncodeToString(secret), "base64 seed": base64.StdEncoding.EncodeToString(secret.Seed()),
			"byte list": strings.ReplaceAll(strings.Trim(fmt.Sprint([]byte(secret.Seed()[:12])), "[]"), " ", ","),
		} {
			secrets["wallet "+w.Pubkey[:6]+" secret, "+form] = v
		}
	}

	logs := buf.String()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		n++
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		if strings.Count(sc.Text(), `"request_id":`) > 1 {
			t.Fatalf("request_id twice in one line: %s", sc.Text())
		}
		if line["msg"] == "http request" && line["request_id"] == nil {
			t.Fatalf("request line without request_id: %s", sc.Text())
		}
	}
	if n < 40 || !strings.Contains(logs, `"level":"WARN"`) {
		t.Fatalf("only %d log lines captured (want the run's debug lines and its warnings)", n)
	}
	for name, s := range secrets {
		if s == "" {
			t.Fatalf("%s is empty", name)
		}
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain the %s:\n%s", name, linesWith(logs, s))
		}
	}
	t.Logf("%d log lines, %d secrets looked for", n, len(secrets))
}

// linesWith is the lines of logs that contain s.
func linesWith(logs, s string) string {
	var out []string
	for l := range strings.Lines(logs) {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// openSealedSecret opens a wallet's sealed secret the way the envelope
// signer does (HPKE base mode, DHKEM(X25519), HKDF-SHA256, AES-256-GCM,
// the wallet's public key bound in as info): the signer never hands a key
// out, and this test must know each key to look for it in the logs.
func openSealedSecret(t *testing.T, masterB64 string, sealed signer.Sealed, pub ed25519.PublicKey) ed25519.PrivateKey {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(masterB64)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ecdh.X25519().NewPrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	hpriv, err := hpke.NewDHKEMPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := hpke.Open(hpriv, hpke.HKDFSHA256(), hpke.AES256GCM(), append([]byte("agentwallet/wallet-secret/v1/"), pub...), sealed.Ciphertext)
	if err != nil {
		t.Fatalf("open a wallet's sealed secret: %v", err)
	}
	secret := ed25519.NewKeyFromSeed(seed)
	if !secret.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatal("the sealed secret is not the wallet's")
	}
	return secret
}

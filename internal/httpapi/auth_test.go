package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/postgres"
	"github.com/agentwallet/agentwallet/internal/signer"
)

func TestBadKeysAre401(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "x"})
	id := a["id"].(string)

	revokedAcct, revokedKey := e.newAccount("devnet")
	var keyID string
	if err := e.db.NewRaw("SELECT id FROM api_keys WHERE account_id = ?", revokedAcct.ID).Scan(context.Background(), &keyID); err != nil {
		t.Fatal(err)
	}
	if status, body := e.do("DELETE", "/api/public/v1/keys/key_"+keyID, revokedKey, nil); status != 200 || body["revoked_at"] == nil {
		t.Fatalf("revoke: %d %v", status, body)
	}
	random := base58.Encode(make([]byte, 32))
	wrongNetwork := auth.LivePrefix + strings.TrimPrefix(e.key, auth.TestPrefix)

	headers := map[string]string{
		"missing":       "",
		"empty bearer":  "Bearer ",
		"basic scheme":  "Basic " + e.key,
		"no scheme":     e.key,
		"malformed":     "Bearer svc_test_short",
		"other prefix":  "Bearer sk_test_" + random,
		"unknown":       "Bearer " + auth.TestPrefix + random,
		"wrong network": "Bearer " + wrongNetwork,
		"revoked":       "Bearer " + revokedKey,
		"trailing junk": "Bearer " + e.key + "x",
		"sql in key":    "Bearer svc_test_' OR 1=1 --",
		"two spaces":    "Bearer  " + e.key,
	}
	routes := [][2]string{
		{"GET", "/api/public/v1/agents"},
		{"POST", "/api/public/v1/agents"},
		{"GET", "/api/public/v1/agents/" + id},
		{"GET", "/api/public/v1/wallets/" + id + "/balance"},
	}
	for name, h := range headers {
		for _, r := range routes {
			req, _ := http.NewRequest(r[0], e.url+r[1], strings.NewReader(`{"label":"y"}`))
			req.Header.Set("Content-Type", "application/json")
			if h != "" {
				req.Header.Set("Authorization", h)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body strings.Builder
			buf := make([]byte, 512)
			n, _ := resp.Body.Read(buf)
			body.Write(buf[:n])
			resp.Body.Close()
			if resp.StatusCode != 401 || strings.TrimSpace(body.String()) != `{"error":"Unauthorized"}` {
				t.Errorf("%s %s with %s: %d %s", r[0], r[1], name, resp.StatusCode, body.String())
			}
		}
	}
	e.wantRows("wallets", 1)
	// The valid key still works, with the scheme in any case.
	req, _ := http.NewRequest("GET", e.url+"/api/public/v1/agents", nil)
	req.Header.Set("Authorization", "bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("lowercase scheme: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}

func TestKeysAreStoredHashed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var rows []map[string]any
	if err := e.db.NewRaw("SELECT row_to_json(k)::text AS j FROM api_keys k").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	secretPart := strings.TrimPrefix(e.key, auth.TestPrefix)
	for _, r := range rows {
		j := r["j"].(string)
		if strings.Contains(j, secretPart) || strings.Contains(j, secretPart[:12]) {
			t.Fatalf("api_keys row holds the key: %s", j)
		}
	}
}

// A database outage answers 503 quickly, never a hang or a 500.
func TestDatabaseDownIs503(t *testing.T) {
	t.Parallel()
	db, err := postgres.Open("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, pub, _ := signer.GenerateMasterKey()
	sealer, _ := signer.NewSealer(pub)
	h, closeOps := httpapi.New(httpapi.Deps{DB: db, Sealer: sealer})
	defer closeOps()
	e := &env{t: t}
	srv := newTestServer(t, h)
	e.url = srv
	key := auth.TestPrefix + base58.Encode([]byte("0123456789abcdef0123456789abcdef"))
	status, body := e.do("GET", "/api/public/v1/agents", key, nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "unavailable")
	status, body = e.do("GET", "/readyz", "", nil)
	wantError(t, status, body, http.StatusServiceUnavailable, "not ready")

}

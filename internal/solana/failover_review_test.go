package solana_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// authStub is a node whose provider refuses the caller's key: HTTP status
// code with a JSON-RPC error body, as a provider may answer a revoked,
// expired or disabled key.
func authStub(t *testing.T, status, code int, msg string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID any `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A node that answers every call with an HTTP 401/403 (its provider
// refuses the key: revoked, expired, out of quota) did not serve the
// call: reads must fail over to the healthy second node, and the node
// must not be reported up (taking the JSON-RPC error body as the node's
// answer would fail every read of the network while the second node is
// healthy).
func TestIssue22FailoverReviewAuthRefusalFailsOver(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	owner := sol.NewWallet().PublicKey()
	ln.SetTokenBalance(t, owner.String(), solana.DevnetUSDCMint.String(), 7)
	for _, tc := range []struct {
		status, code int
		msg          string
	}{
		{http.StatusUnauthorized, -32401, "invalid api key provided"},
		{http.StatusForbidden, -32603, "API key disabled"},
	} {
		bad := authStub(t, tc.status, tc.code, tc.msg)
		c := solana.NewPoolClient([]string{bad, ln.URL}, solana.Devnet, time.Second)
		for i := range 3 {
			b, err := c.Balance(context.Background(), owner)
			if err != nil || b.USDC != 7 {
				t.Fatalf("HTTP %d, read %d: %+v %v (the second node is healthy)", tc.status, i, b, err)
			}
		}
		if h := healthOf(t, c, bad); h.Up {
			t.Fatalf("HTTP %d: the refusing node is reported %+v", tc.status, h)
		}
	}
}

// An API key in the URL's path (Alchemy .../v2/<key>, QuickNode
// .../<token>/, Triton .../<token>, Ankr .../solana/<key>) must not reach
// a node's name or error: they go to /readyz and /metrics (unauthenticated)
// and to logs.
func TestIssue22FailoverReviewPathKeyStaysOutOfHealthAndErrors(t *testing.T) {
	t.Parallel()
	const key = "PATHSECRET0123456789"
	c := solana.NewPoolClient([]string{"http://127.0.0.1:1/v2/" + key}, solana.Devnet, 300*time.Millisecond)
	_, err := c.Balance(context.Background(), sol.NewWallet().PublicKey())
	if err == nil {
		t.Fatal("a read from a closed port succeeded")
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("error quotes the key: %v", err)
	}
	for _, h := range c.Health() {
		if strings.Contains(h.Node, key) || strings.Contains(h.Error, key) {
			t.Errorf("health shows the key: %+v", h)
		}
	}
}

// A password in the URL's user info is redacted only in its decoded form
// (urlSecrets), but solana-go's errors quote the URL re-encoded: a
// password with '@', '/', '?' or ':' (percent-encoded in the setting)
// reaches the error, the node's last error, /readyz and logs.
func TestIssue22FailoverReviewEncodedPasswordStaysOutOfErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr%40t%2Fpw"
	c := solana.NewPoolClient([]string{"http://user:" + secret + "@127.0.0.1:1/"}, solana.Devnet, 300*time.Millisecond)
	_, err := c.Balance(context.Background(), sol.NewWallet().PublicKey())
	if err == nil {
		t.Fatal("a read from a closed port succeeded")
	}
	for _, leak := range []string{secret, "s3cr@t/pw"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error quotes the password: %v", err)
		}
		for _, h := range c.Health() {
			if strings.Contains(h.Node, leak) || strings.Contains(h.Error, leak) {
				t.Errorf("health shows the password: %+v", h)
			}
		}
	}
}

// With every node of a network down since the start (none verified yet),
// no node answers: a balance read must be ErrUnavailable (503 "try
// again"), as the decision says ("A single node that is down is now 503")
// and cmd/api's log promises.
func TestIssue22FailoverReviewNoNodeUpSinceStartIsUnavailable(t *testing.T) {
	t.Parallel()
	c := solana.NewPoolClient([]string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, solana.Devnet, 300*time.Millisecond).
		CheckChain(solana.ChainCheck{Variable: "SOLANA_RPC_URL_DEVNET"})
	if err := c.VerifyChain(context.Background()); err == nil {
		t.Fatal("closed ports verified")
	}
	_, err := solana.Clients{solana.Devnet: c}.Balance(context.Background(), solana.Devnet, sol.NewWallet().PublicKey().String())
	if !errors.Is(err, solana.ErrUnavailable) {
		t.Fatalf("no node ever answered: %v, want ErrUnavailable (503)", err)
	}
}

package solana

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A node answering a public cluster's genesis hash is never funded: no
// cheat method is called.
func TestFundRefusesPublicClusters(t *testing.T) {
	for _, hash := range []string{MainnetGenesisHash, DevnetGenesisHash, TestnetGenesisHash} {
		var methods []string
		node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			methods = append(methods, string(body))
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"`+hash+`"}`)
		}))
		c := Clients{Devnet: NewClient(node.URL, Devnet, 0)}
		_, err := c.Fund(context.Background(), Devnet, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", 1, TokenFund{Token: Devnet.USDC(), Add: 1})
		node.Close()
		if !errors.Is(err, ErrNotLocalChain) {
			t.Fatalf("genesis %s: %v", hash, err)
		}
		if len(methods) != 1 || !strings.Contains(methods[0], "getGenesisHash") {
			t.Fatalf("genesis %s: calls %v", hash, methods)
		}
	}
}

package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// SOLANA_RPC_URL_DEVNET and SOLANA_RPC_URL_MAINNET take comma-separated
// node lists (blanks around commas and empty entries ignored); a bad entry
// refuses to start, naming the variable and hiding the entry's secrets.
func TestIssue22FailoverRPCURLsAreLists(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	c, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv,
		"SOLANA_RPC_URL_MAINNET": " https://a.example/rpc?api-key=K1 , https://b.example/ ,",
		"SOLANA_RPC_URL_DEVNET":  "http://127.0.0.1:8899"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Solana.RPCURLs(solana.Mainnet); !slices.Equal(got, []string{"https://a.example/rpc?api-key=K1", "https://b.example/"}) {
		t.Fatalf("mainnet nodes %q", got)
	}
	if got := c.Solana.RPCURLs(solana.Devnet); !slices.Equal(got, []string{"http://127.0.0.1:8899"}) {
		t.Fatalf("devnet nodes %q", got)
	}
	if h := c.Solana.Client(solana.Mainnet).Health(); len(h) != 2 || strings.Contains(h[0].Node, "K1") || h[0].State != "unverified" {
		t.Fatalf("mainnet client nodes %+v", h)
	}
	for _, bad := range []string{"https://a.example,ftp://b.example", "https://a.example,not a url", " , "} {
		_, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv, "SOLANA_RPC_URL_DEVNET": bad}))
		if err == nil || !strings.Contains(err.Error(), "SOLANA_RPC_URL_DEVNET") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

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
func TestRPCNodes_AreCommaSeparatedLists(t *testing.T) {
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

// The same node listed twice (a copy-paste in a long list) is kept once
// (or the start refused), never taken as two nodes: a read would "fail
// over" from a hanging node to itself (a second timeout before the other
// node is tried), each broadcast would go to it twice, and /readyz would
// count it twice ("degraded: 1 of 3 nodes up" with one node down).
func TestRPCNodes_ADuplicateIsKeptOnce(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	c, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv,
		"SOLANA_RPC_URL_DEVNET": "https://a.example/rpc, https://b.example/,https://a.example/rpc"}))
	if err != nil {
		return // refused at start: fine
	}
	if got := c.Solana.RPCURLs(solana.Devnet); len(got) != 2 {
		t.Fatalf("devnet nodes %q: a node listed twice is used as two", got)
	}
}

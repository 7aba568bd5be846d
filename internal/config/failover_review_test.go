package config

import (
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// The same node listed twice (a copy-paste in a long list) is taken as
// two nodes: a read "fails over" from a hanging node to itself (a second
// timeout before the other node is tried), each broadcast goes to it
// twice, and /readyz counts it twice ("degraded: 1 of 3 nodes up" with
// one node down). It must be refused at start or kept once.
func TestIssue22FailoverReviewDuplicateNodeURLs(t *testing.T) {
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

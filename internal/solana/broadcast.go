package solana

import (
	"context"
	"errors"
	"strings"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// PreflightError is the node refusing a transaction before it is
// broadcast (its simulation failed, or the transaction is malformed, too
// large or badly signed): nothing was sent, and the same bytes would be
// refused again. Logs carry the programs' own words.
type PreflightError struct {
	Code    int // the JSON-RPC error code
	Message string
	Logs    []string
}

// definiteRefusal reports whether a sendTransaction error code is the
// node's verdict on the transaction itself, not on the node's health:
// preflight failure (-32002), signature verification failure (-32003),
// signature count mismatch (-32013), unsupported version (-32015), and an
// invalid request or params (-32600, -32602: malformed, or over 1232
// bytes). Unhealthy nodes, missing slots and transport errors are
// transient.
func definiteRefusal(code int) bool {
	switch code {
	case -32002, -32003, -32013, -32015, -32600, -32602:
		return true
	}
	return false
}

func (e *PreflightError) Error() string { return "preflight: " + e.Message }

// InsufficientFunds reports whether the wallet lacked USDC or SOL, and which.
func (e *PreflightError) InsufficientFunds() (what string, ok bool) {
	all := strings.ToLower(e.Message + "\n" + strings.Join(e.Logs, "\n"))
	switch {
	case strings.Contains(all, "error: insufficient funds"):
		return "USDC", true // the token program's own log line
	case strings.Contains(all, "insufficient lamports"), strings.Contains(all, "insufficientfundsforfee"),
		strings.Contains(all, "insufficientfundsforrent"), strings.Contains(all, "attempt to debit an account but found no record of a prior credit"),
		strings.Contains(all, "insufficient funds for fee"), strings.Contains(all, "insufficient funds for rent"):
		return "SOL", true
	}
	return "", false
}

// BlockhashNotFound reports whether the node did not know the blockhash
// yet (a lagging node behind a load balancer): not a verdict on the
// transaction, which may be sent again.
func (e *PreflightError) BlockhashNotFound() bool {
	return strings.Contains(strings.ToLower(e.Message), "blockhash not found")
}

// AlreadyProcessed reports whether the node has already executed this very
// transaction (another broadcast of the same bytes won): not a failure.
func (e *PreflightError) AlreadyProcessed() bool {
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "already been processed") || strings.Contains(m, "alreadyprocessed")
}

// Broadcast sends signed wire bytes with preflight simulation on. A
// simulation refusal is a *PreflightError; other failures wrap ErrRPC.
// Sending the same bytes again is harmless: a transaction lands once.
func (c *Client) Broadcast(ctx context.Context, raw []byte) (sol.Signature, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sig, err := c.rpc.SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{
		PreflightCommitment: rpc.CommitmentConfirmed,
		MaxRetries:          new(uint(0)), // we re-broadcast ourselves
	})
	if err == nil {
		return sig, nil
	}
	var rpcErr *jsonrpc.RPCError
	if errors.As(err, &rpcErr) && definiteRefusal(rpcErr.Code) {
		pe := &PreflightError{Code: rpcErr.Code, Message: rpcErr.Message}
		if data, ok := rpcErr.Data.(map[string]any); ok {
			if logs, ok := data["logs"].([]any); ok {
				for _, l := range logs {
					if s, ok := l.(string); ok {
						pe.Logs = append(pe.Logs, s)
					}
				}
			}
		}
		return sol.Signature{}, pe
	}
	return sol.Signature{}, c.rpcError("sendTransaction", err)
}

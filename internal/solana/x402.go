package solana

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// MaxLandingScan is how many of an account's newest transactions
// FindLanding reads: an x402 payment is looked for from its signing until
// its blockhash expires (about a minute), far fewer transactions than this
// on one wallet's token account.
const MaxLandingScan = 200

// Landing is one node's answer on whether a partially signed transaction
// (an x402 payment, whose id is the seller's fee payer's signature, not
// ours) landed: the node's height, read first, and what it found.
type Landing struct {
	Height uint64
	// Found: a transaction that names account, carries memo and bears
	// owner's signature is on chain at confirmed commitment; Signature is
	// its id, Err its execution error ("" on success).
	Found     bool
	Signature string
	Err       string
	// History is false when the node keeps no transaction history
	// (agave's getSignaturesForAddress needs it): then "not found" proves
	// nothing and the caller must not take the payment as lost.
	History bool
}

// FindLanding looks for the transaction bearing ownerSignature among the
// newest MaxLandingScan transactions that touched account (the wallet's
// token account), at confirmed commitment; candidates are those whose
// memo contains memo, each then read to check its signatures. Height and
// search come from one node, height first (see Settled): not found by a
// node whose height passed the payment's last valid height means it can
// never land.
func (c *Client) FindLanding(ctx context.Context, account sol.PublicKey, ownerSignature sol.Signature, memo string) (Landing, error) {
	ctx = onOneNode(ctx)
	height, err := c.BlockHeight(ctx)
	if err != nil {
		return Landing{}, err
	}
	out := Landing{Height: height, History: true}
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	limit := MaxLandingScan
	sigs, err := c.rpc.GetSignaturesForAddressWithOpts(lctx, account, &rpc.GetSignaturesForAddressOpts{
		Limit: &limit, Commitment: rpc.CommitmentConfirmed,
	})
	cancel()
	var rpcErr *jsonrpc.RPCError
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == errHistoryNotAvailable:
		out.History = false
		return out, nil
	case err != nil:
		return Landing{}, c.rpcError("getSignaturesForAddress", err)
	}
	for _, s := range sigs {
		if s == nil || s.Memo == nil || !strings.Contains(*s.Memo, memo) {
			continue
		}
		ok, err := c.bears(ctx, s.Signature, ownerSignature)
		if err != nil {
			return Landing{}, err
		}
		if !ok {
			continue
		}
		out.Found, out.Signature = true, s.Signature.String()
		if s.Err != nil {
			out.Err = fmt.Sprint(s.Err)
		}
		return out, nil
	}
	return out, nil
}

// bears reports whether the transaction sig carries signature want.
func (c *Client) bears(ctx context.Context, sig, want sol.Signature) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v := uint64(0)
	res, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v,
	})
	if errors.Is(err, rpc.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, c.rpcError("getTransaction", err)
	}
	if res == nil || res.Transaction == nil {
		return false, nil
	}
	tx, err := res.Transaction.GetTransaction()
	if err != nil {
		return false, nil
	}
	for _, s := range tx.Signatures {
		if s == want {
			return true, nil
		}
	}
	return false, nil
}

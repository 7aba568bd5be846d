package solana

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// Bounds of FindLanding's search: pages of an account's transactions,
// newest first, until one older than the payment (less a margin for the
// chain's clock); past maxLandingPages the search is incomplete.
const (
	landingPage      = 1000
	maxLandingPages  = 5
	landingTimeSlack = 10 * time.Minute
)

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
	// Complete: not found after searching every transaction of the
	// account since the payment was signed. False when the node keeps no
	// transaction history (agave's getSignaturesForAddress needs it) or
	// the search hit its bound: then "not found" proves nothing and the
	// caller must not take the payment as lost.
	Complete bool
	// Cursor, when the search hit its bound, is the oldest transaction it
	// read: a search made once the payment can no longer land may go on
	// from there (FindLanding's from), so a busy account is searched
	// through in several sweeps instead of never.
	Cursor sol.Signature
}

// FindLanding looks for the transaction bearing ownerSignature among the
// transactions that touched account (the wallet's token account) since
// signed, at confirmed commitment, newest first or, with from, from the
// transactions older than from (a Cursor of an earlier search made after
// the payment could last land: nothing newer than that search's start can
// be it): candidates are those whose memo
// contains memo, each then read to check its signatures. Height and
// search come from one node, height first (see Settled): not found by a
// complete search of a node whose height passed the payment's last valid
// height means it can never land.
func (c *Client) FindLanding(ctx context.Context, account sol.PublicKey, ownerSignature sol.Signature, memo string, signed time.Time, from sol.Signature) (Landing, error) {
	ctx = onOneNode(ctx)
	height, err := c.BlockHeight(ctx)
	if err != nil {
		return Landing{}, err
	}
	out := Landing{Height: height}
	before := from
	for range maxLandingPages {
		lctx, cancel := context.WithTimeout(ctx, c.timeout)
		limit := landingPage
		sigs, err := c.rpc.GetSignaturesForAddressWithOpts(lctx, account, &rpc.GetSignaturesForAddressOpts{
			Limit: &limit, Commitment: rpc.CommitmentConfirmed, Before: before,
		})
		cancel()
		var rpcErr *jsonrpc.RPCError
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == errHistoryNotAvailable:
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
		if len(sigs) < landingPage {
			out.Complete = true
			return out, nil
		}
		last := sigs[len(sigs)-1]
		if last.BlockTime != nil && last.BlockTime.Time().Before(signed.Add(-landingTimeSlack)) {
			out.Complete = true
			return out, nil
		}
		before = last.Signature
	}
	out.Cursor = before
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

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

// Landing is the chain's answer on whether a partially signed
// transaction (an x402 payment, whose id is the seller's fee payer's
// signature, not ours) landed: one node's tip, read first, and what its
// search found.
type Landing struct {
	Height uint64
	Slot   uint64 // read with Height
	// Found: a transaction that names account, carries memo and bears
	// owner's signature is on chain at confirmed commitment; Signature is
	// its id, Err its execution error ("" on success).
	Found     bool
	Signature string
	Err       string
	// Complete: not found after searching every transaction of the
	// account since the payment was signed. False when the node keeps no
	// transaction history (agave's getSignaturesForAddress needs it), the
	// search hit its bound, or the node listed a transaction it then did
	// not know (its backends disagree): then "not found" proves nothing.
	Complete bool
	// Absent: not found by complete searches answered at or past the slot
	// asked for (FindLanding's since), on every node asked. Only then may
	// the payment be taken as never landed.
	Absent bool
	// Doubt says why a search past since is not Absent (a node behind that
	// slot, a second node that disagrees or did not answer).
	Doubt string
	// Cursor, when the search hit its bound, is the oldest transaction it
	// read: a search made once the payment can no longer land may go on
	// from there (FindLanding's from), so a busy account is searched
	// through in several sweeps instead of never.
	Cursor sol.Signature
}

// errMinContextSlot is agave's answer to a call whose minContextSlot the
// node has not reached (RpcCustomError::MinContextSlotNotReached).
const errMinContextSlot = -32016

// FindLanding looks for the transaction bearing ownerSignature among the
// transactions that touched account (the wallet's token account) since
// signed, at confirmed commitment, newest first or, with from, from the
// transactions older than from (a Cursor of an earlier search made after
// the payment could last land: nothing newer than that search's start can
// be it): candidates are those whose memo contains memo (every one when
// memo is empty: an MPP payment may carry none), each then read to check
// its signatures. Tip and search come from one node, tip first
// (see Settled).
//
// since, when not zero, is the slot from which "not found" counts (the
// caller's record of a slot at which the payment's blockhash was seen
// expired): the search asks the node for an answer at or past it
// (minContextSlot), and a node behind it refuses. A complete search at
// since, repeated on a second node when there are several, is Absent.
// With since zero nothing is ever Absent.
func (c *Client) FindLanding(ctx context.Context, account sol.PublicKey, ownerSignature sol.Signature, memo string, signed time.Time, from sol.Signature, since uint64) (Landing, error) {
	first := onOneNode(ctx)
	tip, err := c.Tip(first)
	if err != nil {
		return Landing{}, err
	}
	out := Landing{Height: tip.Height, Slot: tip.Slot}
	found, err := c.search(first, account, ownerSignature, memo, signed, from, since)
	if err != nil {
		return Landing{}, err
	}
	out.merge(found)
	if since == 0 || out.Found || !out.Complete {
		return out, nil
	}
	if c.nodes() > 1 {
		second, err := c.search(onAnotherNode(ctx, first), account, ownerSignature, memo, signed, from, since)
		switch {
		case err != nil:
			out.Doubt = "a second node did not answer: " + err.Error()
			return out, nil
		case second.Found:
			out.merge(second)
			return out, nil
		case !second.Complete:
			out.Doubt = "a second node's search was incomplete: " + second.Doubt
			return out, nil
		}
	}
	out.Absent = true
	return out, nil
}

// merge takes one node's search result into l (whose tip it keeps).
func (l *Landing) merge(s Landing) {
	l.Found, l.Signature, l.Err = s.Found, s.Signature, s.Err
	l.Complete, l.Cursor, l.Doubt = s.Complete, s.Cursor, s.Doubt
}

// search is one node's search (ctx pinned to it); see FindLanding.
func (c *Client) search(ctx context.Context, account sol.PublicKey, ownerSignature sol.Signature, memo string, signed time.Time, from sol.Signature, since uint64) (Landing, error) {
	var out Landing
	var minSlot *uint64
	if since > 0 {
		minSlot = &since
	}
	before := from
	for range maxLandingPages {
		lctx, cancel := context.WithTimeout(ctx, c.timeout)
		limit := landingPage
		sigs, err := c.rpc.GetSignaturesForAddressWithOpts(lctx, account, &rpc.GetSignaturesForAddressOpts{
			Limit: &limit, Commitment: rpc.CommitmentConfirmed, Before: before, MinContextSlot: minSlot,
		})
		cancel()
		var rpcErr *jsonrpc.RPCError
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == errHistoryNotAvailable:
			out.Doubt = "the node keeps no transaction history"
			return out, nil
		case errors.As(err, &rpcErr) && rpcErr.Code == errMinContextSlot:
			out.Doubt = fmt.Sprintf("the node has not reached slot %d: it is behind", since)
			return out, nil
		case err != nil:
			return Landing{}, c.rpcError("getSignaturesForAddress", err)
		}
		for _, s := range sigs {
			// A transaction older than the payment cannot be it (read by
			// the chain's block time, less the slack): each candidate
			// costs a getTransaction.
			older := s != nil && s.BlockTime != nil && s.BlockTime.Time().Before(signed.Add(-landingTimeSlack))
			if s == nil || older || memo != "" && (s.Memo == nil || !strings.Contains(*s.Memo, memo)) {
				continue
			}
			// Our signature first (the wallet paid the fee): it is the
			// transaction's id, no read needed.
			ok, known := s.Signature == ownerSignature, true
			if !ok {
				ok, known, err = c.bears(ctx, s.Signature, ownerSignature)
			}
			if err != nil {
				return Landing{}, err
			}
			if !known {
				// Listed, yet unknown to getTransaction: another
				// backend, behind, answered. Nothing is concluded.
				out.Doubt = "the node listed a transaction it then did not know: its backends disagree"
				return out, nil
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
	out.Doubt = "more transactions than one search reads"
	return out, nil
}

// bears reports whether the transaction sig carries signature want, and
// whether the node knew sig at all.
func (c *Client) bears(ctx context.Context, sig, want sol.Signature) (ok, known bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v := uint64(0)
	res, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v,
	})
	if errors.Is(err, rpc.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, c.rpcError("getTransaction", err)
	}
	if res == nil || res.Transaction == nil {
		return false, false, nil
	}
	tx, err := res.Transaction.GetTransaction()
	if err != nil {
		return false, true, nil
	}
	for _, s := range tx.Signatures {
		if s == want {
			return true, true, nil
		}
	}
	return false, true, nil
}

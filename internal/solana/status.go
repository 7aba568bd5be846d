package solana

import (
	"context"
	"errors"
	"fmt"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// MaxSignatureStatuses is the most signatures one getSignatureStatuses
// call may ask about.
const MaxSignatureStatuses = 256

// Status is where a transaction stands on chain.
type Status struct {
	Found bool // the node knows the transaction
	// Confirmed: at confirmed or finalized commitment, so its result
	// (success, or Err) is final; at processed it may still be rolled back.
	Confirmed bool
	// Finalized: rooted by a supermajority; no fork can drop it.
	Finalized bool
	Err       string // the execution's error, when Found
	// Slot is the slot the transaction landed in, when Found.
	Slot uint64
	// Absent (Client.Settled only): not found, and that answer counts: it
	// saw the chain at or past the slot asked for, on every node asked.
	// Neither Found nor Absent: nothing may be concluded yet.
	Absent bool
}

// SignatureStatuses looks up to MaxSignatureStatuses signatures up in one
// call. With history, nodes also search beyond their recent status cache
// (slower; use it before declaring a transaction lost).
func (c *Client) SignatureStatuses(ctx context.Context, history bool, sigs []sol.Signature) ([]Status, error) {
	out, _, err := c.signatureStatuses(ctx, history, sigs)
	return out, err
}

// signatureStatuses is SignatureStatuses and the slot the node answered
// at (its context slot): a transaction that landed after it is unknown to
// that answer.
func (c *Client) signatureStatuses(ctx context.Context, history bool, sigs []sol.Signature) ([]Status, uint64, error) {
	if len(sigs) > MaxSignatureStatuses {
		return nil, 0, fmt.Errorf("%d signatures: at most %d per call", len(sigs), MaxSignatureStatuses)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetSignatureStatuses(ctx, history, sigs...)
	if err != nil {
		return nil, 0, c.rpcError("getSignatureStatuses", err)
	}
	if res == nil || len(res.Value) != len(sigs) {
		return nil, 0, fmt.Errorf("%w: getSignatureStatuses: malformed answer", ErrRPC)
	}
	out := make([]Status, len(sigs))
	for i, v := range res.Value {
		if v == nil {
			continue
		}
		out[i].Found = true
		out[i].Slot = v.Slot
		if v.Err != nil {
			out[i].Err = fmt.Sprint(v.Err)
		}
		out[i].Finalized = v.ConfirmationStatus == rpc.ConfirmationStatusFinalized
		out[i].Confirmed = v.ConfirmationStatus == rpc.ConfirmationStatusConfirmed || out[i].Finalized
	}
	return out, res.Context.Slot, nil
}

// BlockHeight is the node's current block height at confirmed commitment:
// a transaction whose LastValidBlockHeight is below it can no longer land.
func (c *Client) BlockHeight(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	h, err := c.rpc.GetBlockHeight(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, c.rpcError("getBlockHeight", err)
	}
	return h, nil
}

// Tip is where one node's chain stands: a slot and the block height at
// it, read in one answer (getEpochInfo), so the height is known to have
// been reached by that slot.
type Tip struct {
	Slot, Height uint64
}

// Tip reads the node's slot and block height at confirmed commitment.
func (c *Client) Tip(ctx context.Context) (Tip, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return Tip{}, c.rpcError("getEpochInfo", err)
	}
	if res == nil {
		return Tip{}, fmt.Errorf("%w: getEpochInfo: empty answer", ErrRPC)
	}
	return Tip{Slot: res.AbsoluteSlot, Height: res.BlockHeight}, nil
}

// Settled is the chain's answer on whether transactions may still land:
// one node's tip and, searched through its history, their statuses. Both
// come from the same node, tip first, with no failover in between: a
// height from one node and statuses from a lagging other would declare
// lost a transaction that landed.
//
// A "not found" is worth something only from an answer that saw the
// chain at or past the slot from which it matters: since[i] for sigs[i]
// (the caller's record of the slot at which the transaction's blockhash
// was first seen expired), or zero for the tip's slot. Providers balance
// one URL over several backends, and one behind the slot at which a
// transaction landed answers null for it: the statuses' context slot
// tells. A status not found before that slot is not Absent: inconclusive.
// With several nodes, what one node finds Absent is asked of a second
// (statuses and history, its answer at or past since[i] too) before it is
// reported Absent; a second node that does not answer, lags or keeps no
// history leaves it inconclusive (Doubt says why).
//
// History reports whether the first node's "not known" searched a
// history: a node started without transaction history (agave's default)
// searches only its status cache, the last ~300 slots, and answers null
// for a transaction that landed before them. Asked about one unknown
// signature with getTransaction, such a node says so (-32011); then
// History is false and no unknown signature may be taken as lost.
func (c *Client) Settled(ctx context.Context, sigs []sol.Signature, since []uint64) (Settled, error) {
	if len(since) != len(sigs) {
		return Settled{}, fmt.Errorf("settled: %d signatures, %d slots", len(sigs), len(since))
	}
	first := onOneNode(ctx)
	tip, err := c.Tip(first)
	if err != nil {
		return Settled{}, err
	}
	statuses, at, err := c.signatureStatuses(first, true, sigs)
	if err != nil {
		return Settled{}, err
	}
	out := Settled{Height: tip.Height, Slot: tip.Slot, Statuses: statuses, History: true}
	from := func(i int) uint64 {
		if since[i] > 0 {
			return since[i]
		}
		return tip.Slot
	}
	var absent []int
	for i, s := range statuses {
		if s.Found {
			continue
		}
		if at < from(i) {
			out.Doubt = fmt.Sprintf("the node answered at slot %d, before slot %d: it is behind", at, from(i))
			continue
		}
		absent = append(absent, i)
	}
	if len(absent) > 0 {
		out.History, err = c.keepsHistory(first, sigs[absent[0]])
		if err != nil {
			return Settled{}, err
		}
	}
	if len(absent) > 0 && c.nodes() > 1 {
		absent = c.secondOpinion(onAnotherNode(ctx, first), sigs, absent, from, &out)
	}
	for _, i := range absent {
		out.Statuses[i].Absent = true
	}
	return out, nil
}

// secondOpinion asks another node about the signatures the first found
// absent (indexes into sigs): a status it finds replaces the first's; it
// returns those it too finds absent, from an answer at or past from(i),
// with a history. Any other answer leaves them all inconclusive.
func (c *Client) secondOpinion(ctx context.Context, sigs []sol.Signature, absent []int, from func(int) uint64, out *Settled) []int {
	ask := make([]sol.Signature, len(absent))
	for j, i := range absent {
		ask[j] = sigs[i]
	}
	statuses, at, err := c.signatureStatuses(ctx, true, ask)
	if err != nil {
		out.Doubt = "a second node did not answer: " + err.Error()
		return nil
	}
	var still []int
	for j, i := range absent {
		switch {
		case statuses[j].Found:
			out.Statuses[i] = statuses[j]
		case at < from(i):
			out.Doubt = fmt.Sprintf("a second node answered at slot %d, before slot %d: it is behind", at, from(i))
		default:
			still = append(still, i)
		}
	}
	if len(still) == 0 {
		return nil
	}
	history, err := c.keepsHistory(ctx, sigs[still[0]])
	switch {
	case err != nil:
		out.Doubt = "a second node did not answer: " + err.Error()
		return nil
	case !history:
		out.Doubt = "a second node keeps no transaction history"
		return nil
	}
	return still
}

// Settled is one node's tip and the statuses it found there, whether it
// searched a transaction history, and why a status neither found nor
// Absent is in doubt (see Client.Settled).
type Settled struct {
	Height   uint64
	Slot     uint64 // read with Height
	Statuses []Status
	History  bool
	Doubt    string
}

// errHistoryNotAvailable is agave's answer to a history query on a node
// without transaction history (RpcCustomError::TransactionHistoryNotAvailable).
const errHistoryNotAvailable = -32011

// keepsHistory asks the node for sig, a transaction its statuses did not
// find: no such transaction (null) means it searched its history; -32011
// that it keeps none. A transaction it does find here is not "unknown"
// after all: the caller must not take it as lost either, so that is
// reported as no (usable) history.
func (c *Client) keepsHistory(ctx context.Context, sig sol.Signature) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	v := uint64(0)
	_, err := c.rpc.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v,
	})
	var rpcErr *jsonrpc.RPCError
	switch {
	case errors.Is(err, rpc.ErrNotFound):
		return true, nil
	case err == nil:
		return false, nil
	case errors.As(err, &rpcErr) && rpcErr.Code == errHistoryNotAvailable:
		return false, nil
	}
	return false, c.rpcError("getTransaction", err)
}

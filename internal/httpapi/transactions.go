package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/approval"
	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/payment"
)

// TransactionsLimit is how many transactions GET /transactions returns.
const TransactionsLimit = 100

// Transaction is an on-chain transfer from an agent wallet.
type Transaction struct {
	ID           string    `json:"id" format:"uuid" doc:"Record id." example:"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"`
	Signature    string    `json:"signature" doc:"On-chain signature." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	Kind         string    `json:"kind" doc:"What moved: the asset's symbol in lower case for a send or a deposit (usdc, usdt, pyusd, usdg, eurc, or an asset the operator added); x402, an x402 payment that landed (its resource says what it bought); mpp, an MPP charge that landed (the same; asset says what it paid); sol, SOL that came in (a deposit)." example:"usdc"`
	Asset        string    `json:"asset" doc:"The asset that moved: a symbol of GET /assets, or SOL." example:"USDC"`
	Direction    string    `json:"direction" enum:"send,receive" doc:"send: out of the wallet; receive: a deposit, money that came into the wallet from anyone but itself (to any of its USDC accounts, or SOL), recorded once it is confirmed." example:"send"`
	Amount       Quantity  `json:"amount" doc:"In whole units of the asset that moved (its decimals in GET /assets; SOL 9)." example:"1.5"`
	Counterparty string    `json:"counterparty" doc:"The recipient's address (a send), or the sender's (a receive: the owner whose holding fell most)." example:"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"`
	Status       string    `json:"status" enum:"pending,confirmed,failed" doc:"pending: broadcast, not yet confirmed; confirmed: confirmed by the cluster; failed: rejected, or expired without landing (its amount no longer counts against the daily limit)." example:"confirmed"`
	Memo         *string   `json:"memo" nullable:"true" doc:"The on-chain memo, or null." example:"invoice 1234"`
	CreatedAt    time.Time `json:"created_at" doc:"When it was signed, ISO 8601 UTC." example:"2026-04-01T12:00:00Z"`
	WalletID     string    `json:"wallet_id" format:"uuid" doc:"The sending wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	ApprovalID   *string   `json:"approval_id" nullable:"true" doc:"The approval it came from (ap_…), or null when the policy let it through directly." example:"ap_7c9e6679-7425-40de-944b-e07fc1f90ae7"`
	FeeLamports  *int64    `json:"fee_lamports" nullable:"true" doc:"The network fee in lamports, paid by the wallet (or by the account's fee payer, fee_payer) when the transaction lands: 5,000 per signature plus the priority fee (its compute-unit price times the compute units it requests). Null for transactions signed before fees were recorded." example:"6050"`
	FeePayer     *string   `json:"fee_payer" nullable:"true" doc:"The account's fee payer that signed it and pays its fee and, when the recipient had no USDC account, that account's rent (fee sponsorship); null when the wallet paid." example:"5tGqLDnFh8mnXGxMwHWRpY7yTQh1w6fDS3cGHQMgD7oB"`
	Attempts     int       `json:"attempts" minimum:"1" doc:"How many transactions were signed for this payment: 1, plus one each time the current one's blockhash expired before it landed and the payment was signed again (up to the worker's SEND_MAX_ATTEMPTS). signature and fee_lamports are the current attempt's." example:"1"`
	// PreviousSignatures are never null: a payment signed once has none.
	Resource           *string  `json:"resource,omitempty" doc:"Only on kind x402: the URL paid for." example:"https://api.example.com/weather"`
	BelowMinimum       bool     `json:"below_minimum,omitempty" doc:"Only on a deposit (receive) below the account's minimum for its asset (GET /account/settings): recorded and listed, but not announced (no tx.received event). Absent otherwise." example:"true"`
	PreviousSignatures []string `json:"previous_signatures" doc:"The signatures of the earlier attempts, oldest first: each expired unseen and can never land. A send's Idempotency-Key replay keeps answering the first signature." example:"[]"`
}

// MaxTransactionsPage is the largest page of GET /transactions.
const MaxTransactionsPage = 500

type listTransactionsInput struct {
	WalletID  string    `query:"wallet_id" doc:"Only this wallet's transactions (UUIDv4). Another account's wallet answers 404." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Status    string    `query:"status" enum:"pending,confirmed,failed" doc:"Only transactions with this status." example:"confirmed"`
	Direction string    `query:"direction" enum:"send,receive" doc:"Only sends, or only deposits (receive); both when omitted." example:"receive"`
	Asset     string    `query:"asset" maxLength:"10" doc:"Only transactions of this asset (a symbol of GET /assets, or SOL; any case)." example:"USDT"`
	Since     time.Time `query:"since" doc:"Only transactions created at or after this time (ISO 8601)." example:"2026-04-01T00:00:00Z"`
	Until     time.Time `query:"until" doc:"Only transactions created before this time (ISO 8601)." example:"2026-04-02T00:00:00Z"`
	Limit     int       `query:"limit" minimum:"1" maximum:"500" doc:"Page size, 1 to 500 (100 when omitted). A page also ends early, with next_cursor, before it passes 1 MiB of JSON." example:"100"`
	Cursor    string    `query:"cursor" maxLength:"200" doc:"Where to continue: the next_cursor of the previous page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
}

// plain reports whether no parameter was given: the spec's v1 answer.
func (in *listTransactionsInput) plain() bool {
	return in.WalletID == "" && in.Status == "" && in.Asset == "" && in.Direction == "" && in.Since.IsZero() && in.Until.IsZero() && in.Limit == 0 && in.Cursor == ""
}

type transactionsOutput struct {
	Body struct {
		Transactions []Transaction `json:"transactions" doc:"Newest first: without parameters the account's last 100 transactions."`
		// Absent without parameters, so the v1 answer stays exactly the
		// spec's.
		NextCursor pageCursor `json:"next_cursor,omitzero" doc:"When any parameter is given: pass as cursor for the next page; null on the last page. Absent when no parameter is given." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

// pageCursor is a next_cursor that can be absent (zero), null (the last
// page) or a cursor.
type pageCursor struct {
	set  bool
	next *string
}

// IsZero makes omitzero leave an unset cursor out.
func (c pageCursor) IsZero() bool { return !c.set }

// MarshalJSON prints the cursor or null.
func (c pageCursor) MarshalJSON() ([]byte, error) { return json.Marshal(c.next) }

// Schema documents it as a nullable string.
func (pageCursor) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Nullable: true}
}

func (s *server) registerTransactions(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-transactions",
		Method:      http.MethodGet,
		Path:        Prefix + "/transactions",
		Summary:     "List transactions",
		Description: "Without parameters: the last 100 transactions across every wallet of the account, newest first (the v1 answer). " +
			"Optional filters `wallet_id`, `status`, `since`, `until`, and keyset pagination: `limit` (up to 500) and `cursor` (the previous page's `next_cursor`); " +
			"a page continues strictly after the previous one, so transactions made meanwhile never shift it.",
		Tags:   []string{"Payments"},
		Errors: []int{400, 401, 404, 422},
	}, s.listTransactions)
}

// plausible: unset, or in the years 1970 to 9999. Year 0 and years past
// 9999 parse as RFC 3339 but are no moment a transaction has, and
// PostgreSQL refuses some of them.
func plausible(t time.Time) bool {
	y := t.UTC().Year()
	return t.IsZero() || y >= 1970 && y <= 9999
}

// scope is what a listing of payments reads beside its own filters: a
// wallet, and the position after the cursor's item.
type scope struct {
	walletID  uuid.NullUUID
	afterTime time.Time
	afterID   uuid.UUID
}

// listScope checks a listing's window (since, until) and reads its wallet
// filter and cursor.
func (s *server) listScope(ctx context.Context, since, until time.Time, walletID, cursor string) (scope, error) {
	var sc scope
	if !plausible(since) {
		return sc, inputError("query", "since", "must be between 1970 and 9999")
	}
	if !plausible(until) {
		return sc, inputError("query", "until", "must be between 1970 and 9999")
	}
	if walletID != "" {
		id, err := s.walletFilter(ctx, walletID)
		if err != nil {
			return sc, err
		}
		sc.walletID = uuid.NullUUID{UUID: id, Valid: true}
	}
	if cursor != "" {
		at, id, err := parseTimeCursor(cursor)
		if err != nil {
			return sc, err
		}
		sc.afterTime, sc.afterID = at, id
	}
	return sc, nil
}

func (s *server) listTransactions(ctx context.Context, in *listTransactionsInput) (*transactionsOutput, error) {
	pr := principal(ctx)
	f := payment.TxFilter{Status: in.Status, Asset: strings.ToUpper(in.Asset), Since: in.Since, Until: in.Until, Limit: cmp.Or(in.Limit, TransactionsLimit), Wallets: pr.Wallets}
	sc, err := s.listScope(ctx, in.Since, in.Until, in.WalletID, in.Cursor)
	if err != nil {
		return nil, err
	}
	f.WalletID, f.AfterTime, f.AfterID = sc.walletID, sc.afterTime, sc.afterID
	plain, n := in.plain(), f.Limit
	if !plain {
		f.Limit = n + 1 // one more tells whether a next page exists
	}
	// Sends and deposits, each newest first on the same key (time, id),
	// merged: a page of each is enough for a page of both.
	var rows []listed
	if in.Direction != "receive" {
		ts, err := payment.ListTransactions(ctx, s.DB, pr.AccountID, f)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		for i := range ts {
			rows = append(rows, listed{at: ts[i].CreatedAt, id: ts[i].ID, out: transactionOf(&ts[i])})
		}
	}
	if in.Direction != "send" {
		df := f
		df.Asset = strings.ToLower(f.Asset) // deposits name theirs as kinds: usdc, sol
		ds, err := deposit.List(ctx, s.DB, pr.AccountID, df)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		for i := range ds {
			rows = append(rows, listed{at: ds[i].CreatedAt, id: ds[i].ID, out: depositOf(&ds[i], s.ledgerAssetOf(pr.Network, ds[i].Asset))})
		}
	}
	slices.SortStableFunc(rows, func(a, b listed) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return bytes.Compare(b.id[:], a.id[:])
	})
	rows = rows[:min(len(rows), f.Limit)]
	out := &transactionsOutput{}
	if plain {
		// The spec's answer: at most TransactionsLimit transactions of at
		// most a few KiB each (a memo is 200 characters), no cursor.
		out.Body.Transactions = make([]Transaction, len(rows))
		for i := range rows {
			out.Body.Transactions[i] = rows[i].out
		}
		return out, nil
	}
	var next *string
	out.Body.Transactions, next = page(rows, n, func(r *listed) string { return timeCursor(r.at, r.id) }, func(r *listed) Transaction { return r.out })
	out.Body.NextCursor = pageCursor{set: true, next: next}
	return out, nil
}

// listed is a send or a deposit as listed, with its place in the order.
type listed struct {
	at  time.Time
	id  uuid.UUID
	out Transaction
}

// depositOf is a deposit of asset a as a transaction: direction receive,
// kind its asset, the sender as counterparty, the amount in a's decimals.
func depositOf(d *deposit.Deposit, a ledgerAsset) Transaction {
	return Transaction{
		ID: d.ID.String(), Signature: d.Signature, Kind: d.Asset, Asset: a.symbol, Direction: "receive",
		Amount: a.quantity(d.Amount), Counterparty: d.Counterparty, Status: d.Status,
		CreatedAt: d.CreatedAt.UTC(), WalletID: d.WalletID.String(), Attempts: 1, PreviousSignatures: []string{},
		BelowMinimum: d.BelowMinimum,
	}
}

func transactionOf(t *payment.Transaction) Transaction {
	out := Transaction{
		ID: t.ID.String(), Signature: t.Signature, Kind: t.Kind, Asset: t.Asset, Direction: t.Direction,
		Amount: quantityOf(deposit.USDC, int64(t.Amount)), Counterparty: t.Counterparty, Status: t.Status, Memo: t.Memo,
		CreatedAt: t.CreatedAt.UTC(), WalletID: t.WalletID.String(), FeeLamports: t.FeeLamports, FeePayer: t.FeePayer,
		Attempts: max(t.Attempts, 1), PreviousSignatures: t.PreviousSignatures, Resource: t.Resource,
	}
	if out.PreviousSignatures == nil {
		out.PreviousSignatures = []string{}
	}
	if t.ApprovalID.Valid {
		id := approval.PublicID(t.ApprovalID.UUID)
		out.ApprovalID = &id
	}
	return out
}

// walletFilter reads a wallet_id query parameter. Another account's wallet,
// or one outside the key's scope, is not found, never an empty list.
func (s *server) walletFilter(ctx context.Context, raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, inputError("query", "wallet_id", "must be a wallet id (UUID)")
	}
	if _, err := s.wallet(ctx, raw); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

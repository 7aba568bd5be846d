package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/deposit"
	"github.com/agentwallet/agentwallet/internal/solana"
)

type historyInput struct {
	ID       string    `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Asset    string    `query:"asset" maxLength:"10" doc:"Which balance: a symbol of GET /assets or SOL (any case), or all: a series for each asset of the network and SOL. Default USDC." example:"EURC"`
	From     time.Time `query:"from" doc:"First instant (ISO 8601); default: 30 intervals before to." example:"2026-04-01T00:00:00Z"`
	To       time.Time `query:"to" doc:"Last instant (ISO 8601); default: now." example:"2026-04-30T00:00:00Z"`
	Interval string    `query:"interval" enum:"hour,day" doc:"The step between points; default day." example:"day"`
	At       time.Time `query:"at" doc:"One instant only (ISO 8601): the balance then; from, to and interval are then not given." example:"2026-04-15T12:00:00Z"`
}

// BalanceSeries is a wallet's balance of one asset over time.
type BalanceSeries struct {
	Asset    string         `json:"asset" doc:"The asset: a symbol of GET /assets, or SOL." example:"EURC"`
	Decimals int            `json:"decimals" doc:"The asset's decimals: its amounts are exact to this many places (SOL 9)." example:"6"`
	Points   []BalancePoint `json:"points" doc:"One per instant asked, oldest first."`
}

// BalancePoint is a wallet's balance of an asset at an instant, from its
// ledger.
type BalancePoint struct {
	At     time.Time `json:"at" doc:"The instant, ISO 8601 UTC." example:"2026-04-15T12:00:00Z"`
	Asset  string    `json:"asset" doc:"The asset, as its series names it." example:"EURC"`
	Amount Quantity  `json:"amount" doc:"What the wallet held of the asset after the last change at or before at, in whole units: across its token accounts of the asset, or of its address for SOL." example:"12.5"`
}

type historyOutput struct {
	Body struct {
		WalletID string          `json:"wallet_id" format:"uuid" doc:"The wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
		Series   []BalanceSeries `json:"series" doc:"One per asset asked: the one asset, or with asset=all the network's assets in the order of GET /assets, then SOL."`
	}
}

// registerHistory mounts a wallet's balance over time.
func (s *server) registerHistory(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-wallet-balance-history",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets/{id}/balance/history",
		Summary:     "Get a wallet's balance over time",
		Description: fmt.Sprintf("The wallet's balance of an asset (`asset`: USDC by default, any asset of GET /assets, SOL, or `all` for a series each) "+
			"at each instant from `from` to `to` every `interval` (at most %d points per series, and %d over all series), or at one instant (`at`), ", deposit.MaxPoints, deposit.MaxSeriesPoints) +
			"from its ledger: every change of its accounts, read from the transactions that made them (sends with their fees, deposits, x402 payments), " +
			"recorded by the deposit watcher within seconds of confirmation. A change made without a transaction (a test chain's faucet) is not in it.",
		Tags:   []string{"Wallets"},
		Errors: []int{400, 401, 404, 422},
	}, s.history)
}

func (s *server) history(ctx context.Context, in *historyInput) (*historyOutput, error) {
	w, err := s.wallet(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var assets []ledgerAsset
	switch n := principal(ctx).Network; {
	case in.Asset == "":
		assets = []ledgerAsset{s.ledgerAssetOf(n, deposit.USDC)}
	case strings.EqualFold(in.Asset, "all"):
		assets = s.ledgerAssets(n)
	default:
		a, ok := s.ledgerAsset(n, in.Asset)
		if !ok {
			return nil, inputError("query", "asset", "want a symbol of GET /assets, SOL, or all")
		}
		assets = []ledgerAsset{a}
	}
	var at []time.Time
	if !in.At.IsZero() {
		if !in.From.IsZero() || !in.To.IsZero() || in.Interval != "" {
			return nil, inputError("query", "at", "give at alone, or from, to and interval")
		}
		if !plausible(in.At) {
			return nil, inputError("query", "at", "must be between 1970 and 9999")
		}
		at = []time.Time{in.At}
	} else {
		step := 24 * time.Hour
		if in.Interval == "hour" {
			step = time.Hour
		}
		to := in.To
		if to.IsZero() {
			to = time.Now().UTC()
		}
		from := in.From
		if from.IsZero() {
			from = to.Add(-30 * step)
		}
		if !plausible(from) || !plausible(to) {
			return nil, inputError("query", "from", "from and to must be between 1970 and 9999")
		}
		if at, err = deposit.Instants(from, to, step); err != nil {
			return nil, inputError("query", "from", err.Error())
		}
		if len(at)*len(assets) > deposit.MaxSeriesPoints {
			return nil, inputError("query", "from", fmt.Sprintf("%d instants of %d assets: at most %d points over all series; ask fewer instants or one asset",
				len(at), len(assets), deposit.MaxSeriesPoints))
		}
	}
	keys := make([]string, len(assets))
	for i, a := range assets {
		keys[i] = a.key
	}
	series, err := deposit.History(ctx, s.DB, w.ID, keys, at)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &historyOutput{}
	out.Body.WalletID = w.ID.String()
	out.Body.Series = make([]BalanceSeries, len(series))
	for i, sr := range series {
		a := assets[i]
		b := BalanceSeries{Asset: a.symbol, Decimals: a.decimals, Points: make([]BalancePoint, len(sr.Points))}
		for j, p := range sr.Points {
			b.Points[j] = BalancePoint{At: p.At.UTC(), Asset: a.symbol, Amount: a.quantity(p.Balance)}
		}
		out.Body.Series[i] = b
	}
	return out, nil
}

// ledgerAsset is an asset as the ledger, deposits and differences key it
// (key: its symbol in lower case, or sol) and as answers name it (symbol,
// upper case) with its decimals.
type ledgerAsset struct {
	key, symbol string
	decimals    int
}

// quantity is units of a as answered.
func (a ledgerAsset) quantity(units int64) Quantity {
	return Quantity{units: units, decimals: a.decimals}
}

// solAsset is SOL, which no asset table lists.
var solAsset = ledgerAsset{key: deposit.SOL, symbol: "SOL", decimals: 9}

// ledgerAssets are the network's assets in the table's order, then SOL.
func (s *server) ledgerAssets(n solana.Network) []ledgerAsset {
	var out []ledgerAsset
	for _, a := range s.Assets.OrDefaults().Of(n) {
		out = append(out, ledgerAsset{key: strings.ToLower(a.Symbol), symbol: a.Symbol, decimals: int(a.Decimals)})
	}
	return append(out, solAsset)
}

// ledgerAsset is the network's asset of symbol (any case), or SOL.
func (s *server) ledgerAsset(n solana.Network, symbol string) (ledgerAsset, bool) {
	if strings.EqualFold(symbol, solAsset.symbol) {
		return solAsset, true
	}
	a, ok := s.Assets.OrDefaults().Find(n, symbol)
	if !ok {
		return ledgerAsset{}, false
	}
	return ledgerAsset{key: strings.ToLower(a.Symbol), symbol: a.Symbol, decimals: int(a.Decimals)}, true
}

// ledgerAssetOf is the asset of a stored row's key. A key the table no
// longer lists (an operator removed the asset) is still named, in upper
// case, at the decimals every table asset has.
func (s *server) ledgerAssetOf(n solana.Network, key string) ledgerAsset {
	if a, ok := s.ledgerAsset(n, key); ok {
		return a
	}
	return ledgerAsset{key: key, symbol: strings.ToUpper(key), decimals: deposit.Decimals(key)}
}

type differencesInput struct {
	ID     string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Asset  string `query:"asset" maxLength:"10" doc:"Only differences of this asset: a symbol of GET /assets or SOL (any case); every asset when omitted." example:"EURC"`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" doc:"Page size, 1 to 100; 50 when omitted." example:"50"`
	Cursor string `query:"cursor" maxLength:"200" doc:"Where to continue: the next_cursor of the previous page. Omit for the first page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
}

// BalanceDifference is money of a wallet that moved without the service:
// in a transaction it did not make, or in a way no transaction it read
// shows (the daily snapshot).
type BalanceDifference struct {
	ID        string    `json:"id" format:"uuid" doc:"The difference." example:"0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"`
	Kind      string    `json:"kind" enum:"unexplained_outflow,snapshot" doc:"unexplained_outflow: money left in a transaction the service did not make (the wallet's key used elsewhere, or a delegate). snapshot: the balance read on chain differed from the ledger at the same slot; from then on the ledger holds the chain's balance." example:"unexplained_outflow"`
	Asset     string    `json:"asset" doc:"The asset that moved: a symbol of GET /assets, or SOL." example:"USDC"`
	Amount    Quantity  `json:"amount" doc:"Signed, in whole units of the asset: negative, the chain holds less than the service accounted for." example:"-5"`
	At        time.Time `json:"at" doc:"When: the transaction's block time, or the snapshot's." example:"2026-04-15T12:00:00Z"`
	Slot      uint64    `json:"slot" doc:"The transaction's slot, or the slot the snapshot read the chain at." example:"312345678"`
	Signature *string   `json:"signature" nullable:"true" doc:"unexplained_outflow: the transaction; null for a snapshot." example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	To        *string   `json:"to" nullable:"true" doc:"unexplained_outflow: who received the most; null for a snapshot." example:"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"`
	Chain     *Quantity `json:"chain" nullable:"true" doc:"snapshot: the balance read on chain (all the wallet's accounts of the asset); null otherwise." example:"37.5"`
	Ledger    *Quantity `json:"ledger" nullable:"true" doc:"snapshot: the ledger's balance at the same slot; null otherwise." example:"42.5"`
}

type differencesOutput struct {
	Body struct {
		WalletID   string              `json:"wallet_id" format:"uuid" doc:"The wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
		Items      []BalanceDifference `json:"items" doc:"Newest first."`
		NextCursor *string             `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

// registerDifferences mounts the list of a wallet's unexplained movements.
func (s *server) registerDifferences(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "list-wallet-balance-differences",
		Method:      http.MethodGet,
		Path:        Prefix + "/wallets/{id}/balance/differences",
		Summary:     "List a wallet's unexplained balance differences",
		Description: "Money of the wallet that moved without the service, newest first, of every asset or of one (`asset`), each in its asset's units: outflows in transactions the service did not make " +
			"(seen by the deposit watcher within seconds; event wallet.unexplained_outflow) and differences between the balance read on chain and the ledger " +
			"at the daily snapshot (event wallet.balance_mismatch). Empty when every change of the wallet's balance is explained. " +
			"Pass `next_cursor` as `cursor` for the next page.",
		Tags:   []string{"Wallets"},
		Errors: []int{400, 401, 404, 422},
	}, s.differences)
}

func (s *server) differences(ctx context.Context, in *differencesInput) (*differencesOutput, error) {
	w, err := s.wallet(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	n := principal(ctx).Network
	var key string
	if in.Asset != "" {
		a, ok := s.ledgerAsset(n, in.Asset)
		if !ok {
			return nil, inputError("query", "asset", "want a symbol of GET /assets, or SOL")
		}
		key = a.key
	}
	var afterAt time.Time
	var afterID uuid.UUID
	if in.Cursor != "" {
		if afterAt, afterID, err = parseTimeCursor(in.Cursor); err != nil {
			return nil, err
		}
	}
	limit := cmp.Or(in.Limit, DefaultPageSize)
	ds, err := deposit.Differences(ctx, s.DB, w.ID, key, afterAt, afterID, limit+1)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &differencesOutput{}
	out.Body.WalletID = w.ID.String()
	if len(ds) > limit {
		ds = ds[:limit]
		c := timeCursor(ds[limit-1].At, ds[limit-1].ID)
		out.Body.NextCursor = &c
	}
	out.Body.Items = make([]BalanceDifference, len(ds))
	for i, d := range ds {
		a := s.ledgerAssetOf(n, d.Asset)
		b := BalanceDifference{ID: d.ID.String(), Kind: d.Kind, Asset: a.symbol, Amount: a.quantity(d.Amount), At: d.At.UTC(), Slot: d.Slot}
		if d.Signature.Valid {
			b.Signature = &d.Signature.String
		}
		if d.To.Valid {
			b.To = &d.To.String
		}
		if d.Chain.Valid {
			c, l := a.quantity(d.Chain.Int64), a.quantity(d.Ledger.Int64)
			b.Chain, b.Ledger = &c, &l
		}
		out.Body.Items[i] = b
	}
	return out, nil
}

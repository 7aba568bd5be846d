package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentwallet/agentwallet/internal/analytics"
)

// MaxAnalyticsDays is the longest range one analytics answer covers.
const MaxAnalyticsDays = 366

type analyticsInput struct {
	From string `query:"from" maxLength:"10" doc:"First UTC day, YYYY-MM-DD. Default: 29 days before to." example:"2026-04-01"`
	To   string `query:"to" maxLength:"10" doc:"Last UTC day (included), YYYY-MM-DD. Default: today (UTC)." example:"2026-04-30"`
}

// SpendDay is one wallet's sends on one day.
type SpendDay struct {
	Day       string `json:"day" doc:"UTC day, YYYY-MM-DD." example:"2026-04-01"`
	WalletID  string `json:"wallet_id" format:"uuid" doc:"The wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Amount    USDC   `json:"amount_usdc" doc:"USD stablecoins sent that day (USDC, USDT, PYUSD, USDG together at 1:1): signed transactions that did not fail, as the daily limit counts them." example:"42.5"`
	AmountEUR EUR    `json:"amount_eur" doc:"EUR stablecoins (EURC) sent that day, counted like amount_usdc." example:"0"`
	Count     int    `json:"transactions" doc:"How many transactions." example:"3"`
	Fee       int64  `json:"fee_lamports" doc:"Network fees (base and priority) paid that day by the wallet's transactions that confirmed, in lamports." example:"18150"`
	// By kind: x402 payments within the day's figures.
	X402Amount USDC `json:"x402_amount_usdc" doc:"Of amount_usdc, what x402 payments spent or hold reserved (landed, or signed and not expired)." example:"0.5"`
	X402Count  int  `json:"x402_payments" doc:"Of transactions, how many are x402 payments." example:"1"`
	MPPAmount  USDC `json:"mpp_amount_usdc" doc:"Of amount_usdc, what MPP charges spent or hold reserved (landed, or signed and not expired)." example:"0.1"`
	MPPCount   int  `json:"mpp_payments" doc:"Of transactions, how many are MPP charges." example:"1"`
}

// AnalyticsWallet is a wallet that spent in the range.
type AnalyticsWallet struct {
	ID         string `json:"id" format:"uuid" doc:"Wallet id." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Label      string `json:"label" doc:"Wallet label." example:"research-agent"`
	DailyLimit USDC   `json:"daily_limit_usdc" doc:"Its daily limit now." example:"100"`
}

// ApprovalsDay is the approvals decided on one day.
type ApprovalsDay struct {
	Day            string   `json:"day" doc:"UTC day the approvals were decided, YYYY-MM-DD." example:"2026-04-01"`
	Approved       int      `json:"approved" doc:"Approved by a person (sent, or being signed)." example:"4"`
	Rejected       int      `json:"rejected" doc:"Rejected, by a person or by the policy at approval time." example:"1"`
	Expired        int      `json:"expired" doc:"Expired undecided." example:"0"`
	MedianDecision *float64 `json:"median_decision_seconds" nullable:"true" doc:"Median seconds from request to a person's decision; null without one." example:"312.5"`
}

// ReceivedDay is what came into one wallet on one day, of one asset.
type ReceivedDay struct {
	Day      string   `json:"day" doc:"UTC day, YYYY-MM-DD." example:"2026-04-01"`
	WalletID string   `json:"wallet_id" format:"uuid" doc:"The wallet." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Asset    string   `json:"asset" doc:"What came in: a symbol of GET /assets, or SOL." example:"USDC"`
	Amount   Quantity `json:"amount" doc:"Confirmed deposits that day, in whole units of the asset (its decimals in GET /assets; SOL 9)." example:"25"`
	Count    int      `json:"deposits" doc:"How many deposits." example:"2"`
}

// BlockedReason counts the sends a rule blocked.
type BlockedReason struct {
	Reason string `json:"reason" enum:"exceeds_max_tx,exceeds_daily_limit,exceeds_weekly_limit,exceeds_monthly_limit,exceeds_velocity,outside_active_hours,recipient_not_allowed,asset_not_allowed,wallet_frozen" doc:"The rule." example:"exceeds_daily_limit"`
	Count  int    `json:"count" doc:"Sends it blocked in the range." example:"7"`
}

type analyticsOutput struct {
	Body struct {
		From           string            `json:"from" doc:"First UTC day." example:"2026-04-01"`
		To             string            `json:"to" doc:"Last UTC day (included)." example:"2026-04-30"`
		Spend          []SpendDay        `json:"spend" doc:"Per day and wallet, days ascending; days without sends are absent."`
		Wallets        []AnalyticsWallet `json:"wallets" doc:"The wallets in spend, with their daily limits."`
		Approvals      []ApprovalsDay    `json:"approvals" doc:"Per day decided, ascending; days without decisions are absent."`
		MedianDecision *float64          `json:"median_decision_seconds" nullable:"true" doc:"Median seconds from request to a person's decision over the range; null without one." example:"298"`
		Blocked        []BlockedReason   `json:"blocked" doc:"Blocked sends by rule, most first."`
		Received       []ReceivedDay     `json:"received" doc:"Deposits per day, wallet and asset, days ascending (then wallet, then asset); days without deposits are absent."`
	}
}

func (s *server) registerAnalytics(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-analytics",
		Method:      http.MethodGet,
		Path:        Prefix + "/analytics",
		Summary:     "Aggregate spend, approvals and blocks over a range of days",
		Description: "Spend and network fees per UTC day per wallet (with each wallet's daily limit), approvals decided per day by outcome with the median time to a person's decision, " +
			fmt.Sprintf("blocked sends by rule, and deposits per day, wallet and asset (every asset of GET /assets, and SOL), over at most %d days, aggregated in the database. A key limited to some wallets counts only theirs.", MaxAnalyticsDays),
		Tags:   []string{"Analytics"},
		Errors: []int{401, 422},
	}, s.getAnalytics)
}

func (s *server) getAnalytics(ctx context.Context, in *analyticsInput) (*analyticsOutput, error) {
	r, err := analyticsRange(in.From, in.To, time.Now())
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	rep, err := analytics.Compute(ctx, s.DB, pr.AccountID, pr.Wallets, r)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &analyticsOutput{}
	b := &out.Body
	b.From, b.To = r.From.Format(time.DateOnly), r.To.Format(time.DateOnly)
	b.Spend = make([]SpendDay, len(rep.Spend))
	for i, x := range rep.Spend {
		b.Spend[i] = SpendDay{Day: x.Day.Format(time.DateOnly), WalletID: x.WalletID.String(), Amount: USDC(x.Amount), AmountEUR: EUR(x.AmountEUR), Count: x.Count, Fee: x.FeeLamports, X402Amount: USDC(x.X402Amount), X402Count: x.X402Count, MPPAmount: USDC(x.MPPAmount), MPPCount: x.MPPCount}
	}
	b.Wallets = make([]AnalyticsWallet, len(rep.Wallets))
	for i, w := range rep.Wallets {
		b.Wallets[i] = AnalyticsWallet{ID: w.ID.String(), Label: w.Label, DailyLimit: USDC(w.DailyLimit)}
	}
	b.Approvals = make([]ApprovalsDay, len(rep.Approvals))
	for i, a := range rep.Approvals {
		b.Approvals[i] = ApprovalsDay{Day: a.Day.Format(time.DateOnly), Approved: a.Approved, Rejected: a.Rejected, Expired: a.Expired, MedianDecision: a.MedianDecision}
	}
	b.MedianDecision = rep.MedianDecision
	b.Received = make([]ReceivedDay, len(rep.Received))
	for i, x := range rep.Received {
		a := s.ledgerAssetOf(pr.Network, x.Asset)
		b.Received[i] = ReceivedDay{Day: x.Day.Format(time.DateOnly), WalletID: x.WalletID.String(), Asset: a.symbol,
			Amount: a.quantity(x.Amount), Count: x.Count}
	}
	b.Blocked = make([]BlockedReason, len(rep.Blocked))
	for i, x := range rep.Blocked {
		b.Blocked[i] = BlockedReason{Reason: x.Reason, Count: x.Count}
	}
	return out, nil
}

// analyticsRange reads the from/to days: both optional (the 30 days
// ending today), from not after to, at most MaxAnalyticsDays.
func analyticsRange(from, to string, now time.Time) (analytics.Range, error) {
	var r analytics.Range
	day := func(field, v string) (time.Time, error) {
		d, err := time.Parse(time.DateOnly, v)
		if err != nil || d.Year() < 1970 {
			return d, inputError("query", field, "must be a day, YYYY-MM-DD, from 1970")
		}
		return d, nil
	}
	var err error
	if r.To = now.UTC().Truncate(24 * time.Hour); to != "" {
		if r.To, err = day("to", to); err != nil {
			return r, err
		}
	}
	if r.From = r.To.AddDate(0, 0, -29); from != "" {
		if r.From, err = day("from", from); err != nil {
			return r, err
		}
	}
	if r.From.After(r.To) {
		return r, inputError("query", "from", "must not be after to")
	}
	if r.To.Sub(r.From) >= MaxAnalyticsDays*24*time.Hour {
		return r, inputError("query", "to", fmt.Sprintf("the range is at most %d days", MaxAnalyticsDays))
	}
	return r, nil
}

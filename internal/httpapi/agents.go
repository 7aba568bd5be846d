package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/money"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// PolicyInput is a policy in a create request; omitted fields take the
// defaults (daily 100, max per send 25, approval threshold 10, no allowlist,
// none of the optional rules). In a change, omitted fields keep their
// value, and an optional rule sent as null is removed.
type PolicyInput struct {
	DailyLimitUSDC        *Amount                `json:"daily_limit_usdc,omitempty" doc:"Cap on the UTC day's total sends, in USDC. Default 100." example:"100"`
	MaxTxUSDC             *Amount                `json:"max_tx_usdc,omitempty" doc:"Cap on one send, in USDC. Default 25." example:"25"`
	ApprovalThresholdUSDC *Amount                `json:"approval_threshold_usdc,omitempty" doc:"Sends of at least this amount wait for human approval; 0 sends every payment to approval. Default 10." example:"10"`
	Allowlist             []string               `json:"allowlist,omitempty" nullable:"true" maxItems:"1000" doc:"Recipient addresses (base58) the wallet may pay; empty means any. No duplicates." example:"[\"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM\"]"`
	AllowlistLabels       map[string]string      `json:"allowlist_labels,omitempty" nullable:"true" maxProperties:"1000" doc:"Optional labels of allowlist entries (an address book): address → label of 1 to 100 characters; every address must be on the allowlist. Given, it replaces the labels; omitted, the addresses that stay keep theirs. Labels never change a decision; whoever may only tighten a policy (agent keys) may not set or change any label." example:"{\"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM\":\"Acme invoices\"}"`
	WeeklyLimitUSDC       Removable[Amount]      `json:"weekly_limit_usdc,omitzero" doc:"Optional cap on what the last 7 days (a rolling window of 7×24 hours back from each payment) sent or reserved, counted like the daily limit; over it a payment is blocked with exceeds_weekly_limit. Omitted: none on create, unchanged in a change; null removes it." example:"300"`
	MonthlyLimitUSDC      Removable[Amount]      `json:"monthly_limit_usdc,omitzero" doc:"Optional cap on what the last 30 days (rolling, 30×24 hours) sent or reserved, counted like the daily limit; over it: exceeds_monthly_limit. Omitted: none on create, unchanged in a change; null removes it." example:"1000"`
	MaxTxPerHour          Removable[int]         `json:"max_tx_per_hour,omitzero" minimum:"0" maximum:"1000000" doc:"Optional cap on how many payments (sends and x402 payments that were sent or parked for approval; blocked ones do not count) the last hour (rolling) may hold; the next is blocked with exceeds_velocity. 0 blocks every payment. Omitted: none on create, unchanged in a change; null removes it." example:"10"`
	MaxTxPerDay           Removable[int]         `json:"max_tx_per_day,omitzero" minimum:"0" maximum:"1000000" doc:"Optional cap on how many payments the last 24 hours (rolling) may hold, counted like max_tx_per_hour; over it: exceeds_velocity. Omitted: none on create, unchanged in a change; null removes it." example:"50"`
	ActiveHours           Removable[ActiveHours] `json:"active_hours,omitzero" doc:"Optional: when the agent may pay. Outside these hours a payment is blocked (outside_active_hours) or parked for a human (see outside_active_hours). Omitted: any time on create, unchanged in a change; null removes them." example:"{\"timezone\":\"America/New_York\",\"days\":[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"],\"from\":\"09:00\",\"to\":\"18:00\"}"`
	OutsideActiveHours    *string                `json:"outside_active_hours,omitempty" nullable:"true" enum:"block,approve" doc:"What becomes of a payment outside active_hours: block (the default; reason outside_active_hours) or approve (parked for a human whatever its amount). Omitted or null: block on create, unchanged in a change." example:"block"`
	Assets                []string               `json:"assets,omitempty" nullable:"true" maxItems:"50" doc:"The assets (symbols of GET /assets) the wallet may spend; a payment in any other is blocked with asset_not_allowed. Default [\"USDC\"]: an asset the service gains is spent only once a human allows it. The USD ones (USDC, USDT, PYUSD, USDG) count together under the _usdc limits at 1:1, the EUR ones (EURC) under the _eur limits. Agent keys may only remove entries." example:"[\"USDC\",\"USDT\"]"`
	DailyLimitEUR         Removable[Amount]      `json:"daily_limit_eur,omitzero" doc:"Cap on the UTC day's payments in EUR stablecoins, in euros (EURC counted 1:1). Never set, or null: 0, no EUR spending. Setting any EUR limit where none were leaves the others 0." example:"50"`
	MaxTxEUR              Removable[Amount]      `json:"max_tx_eur,omitzero" doc:"Cap on one payment in a EUR stablecoin, in euros. Never set, or null: 0 (no EUR spending)." example:"20"`
	ApprovalThresholdEUR  Removable[Amount]      `json:"approval_threshold_eur,omitzero" doc:"Payments in a EUR stablecoin of at least this many euros wait for a human. Never set, or null: 0 (every EUR payment waits)." example:"10"`
	WeeklyLimitEUR        Removable[Amount]      `json:"weekly_limit_eur,omitzero" doc:"Optional cap on the last 7 days' EUR payments (rolling), like weekly_limit_usdc. Omitted: unchanged (none on create); null removes it." example:"150"`
	MonthlyLimitEUR       Removable[Amount]      `json:"monthly_limit_eur,omitzero" doc:"Optional cap on the last 30 days' EUR payments (rolling), like monthly_limit_usdc. Omitted: unchanged (none on create); null removes it." example:"500"`
	ApprovalsRequired     *int                   `json:"approvals_required,omitempty" nullable:"true" minimum:"1" maximum:"1000" doc:"How many distinct people must approve a parked payment before it is sent (m-of-n approvals): 1 to the number of the account's people who can approve (its dashboard owners and approvers; 422 above it). Each dashboard user, admin key (counted as the person who made it) or linked Slack member counts once; the requester never counts; one reject closes it. Raising it tightens, lowering it loosens (agent keys may only raise it). Omitted or null: 1 on create, unchanged in a change." example:"2"`
}

// ActiveHours is when a wallet's agent may pay, on the wall clock of a
// time zone.
type ActiveHours struct {
	Timezone string   `json:"timezone" maxLength:"64" doc:"An IANA time zone name (America/New_York, Europe/Paris, UTC); daylight-saving changes follow the zone's rules." example:"America/New_York"`
	Days     []string `json:"days" minItems:"1" maxItems:"7" nullable:"false" doc:"The days the window opens, each once: mon, tue, wed, thu, fri, sat, sun (answered Monday first)." example:"[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"]"`
	From     string   `json:"from" minLength:"5" maxLength:"5" doc:"Opening time, HH:MM (00:00 to 23:59), inclusive." example:"09:00"`
	To       string   `json:"to" minLength:"5" maxLength:"5" doc:"Closing time, HH:MM (00:00 to 24:00), exclusive: a payment at exactly this minute is outside. Before from, the window runs overnight: it opens on a listed day and closes on the next day (listed or not). Must differ from from." example:"18:00"`
}

// activeHoursFields are ActiveHours' fields without its methods: its
// schema is generated from them.
type activeHoursFields ActiveHours

// Schema documents active hours inline (so they may be null).
func (ActiveHours) Schema(r huma.Registry) *huma.Schema {
	s := huma.SchemaFromType(r, reflect.TypeFor[activeHoursFields]())
	s.Description = "When the agent may pay: on days, from from (inclusive) to to (exclusive), on the wall clock of timezone."
	return s
}

func activeHoursOf(h *policy.ActiveHours) *ActiveHours {
	if h == nil {
		return nil
	}
	return &ActiveHours{Timezone: h.Timezone, Days: h.Days.Names(), From: clockText(h.From), To: clockText(h.To)}
}

func clockText(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// Policy is a wallet's spending policy as returned.
type Policy struct {
	DailyLimitUSDC        USDC              `json:"daily_limit_usdc" doc:"Cap on the UTC day's total sends, in USDC." example:"100"`
	MaxTxUSDC             USDC              `json:"max_tx_usdc" doc:"Cap on one send, in USDC." example:"25"`
	ApprovalThresholdUSDC USDC              `json:"approval_threshold_usdc" doc:"Sends of at least this amount wait for human approval." example:"10"`
	Allowlist             []string          `json:"allowlist" doc:"Recipient addresses the wallet may pay; empty means any." example:"[]"`
	AllowlistLabels       map[string]string `json:"allowlist_labels" doc:"Labels of some allowlist entries (address → label); {} when none." example:"{}"`
	WeeklyLimitUSDC       *USDC             `json:"weekly_limit_usdc" nullable:"true" doc:"Cap on the last 7 days' total (rolling), in USDC; null: none." example:"300"`
	MonthlyLimitUSDC      *USDC             `json:"monthly_limit_usdc" nullable:"true" doc:"Cap on the last 30 days' total (rolling), in USDC; null: none." example:"1000"`
	MaxTxPerHour          *int              `json:"max_tx_per_hour" nullable:"true" doc:"Cap on the payments (sent or parked) of the last hour (rolling); null: none." example:"10"`
	MaxTxPerDay           *int              `json:"max_tx_per_day" nullable:"true" doc:"Cap on the payments (sent or parked) of the last 24 hours (rolling); null: none." example:"50"`
	ActiveHours           *ActiveHours      `json:"active_hours" nullable:"true" doc:"When the agent may pay; null: any time." example:"{\"timezone\":\"America/New_York\",\"days\":[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"],\"from\":\"09:00\",\"to\":\"18:00\"}"`
	OutsideActiveHours    string            `json:"outside_active_hours" enum:"block,approve" doc:"What becomes of a payment outside active_hours: blocked, or parked for a human whatever its amount." example:"block"`
	ApprovalsRequired     int               `json:"approvals_required" minimum:"1" doc:"How many distinct people must approve a parked payment before it is sent (1: one approve, as before). When people leave so that fewer remain, those who remain suffice." example:"1"`
	Assets                []string          `json:"assets" doc:"The assets the wallet may spend (symbols of GET /assets); others are blocked with asset_not_allowed. USD stablecoins count together under the _usdc limits at 1:1 (the peg is assumed, not priced), EUR ones under the _eur limits." example:"[\"USDC\"]"`
	DailyLimitEUR         *EUR              `json:"daily_limit_eur" nullable:"true" doc:"Cap on the UTC day's payments in EUR stablecoins, in euros; null: no EUR limits, so no EUR spending." example:"50"`
	MaxTxEUR              *EUR              `json:"max_tx_eur" nullable:"true" doc:"Cap on one EUR payment; null: no EUR spending." example:"20"`
	ApprovalThresholdEUR  *EUR              `json:"approval_threshold_eur" nullable:"true" doc:"EUR payments of at least this wait for a human; null: no EUR spending." example:"10"`
	WeeklyLimitEUR        *EUR              `json:"weekly_limit_eur" nullable:"true" doc:"Cap on the last 7 days' EUR payments (rolling); null: none." example:"150"`
	MonthlyLimitEUR       *EUR              `json:"monthly_limit_eur" nullable:"true" doc:"Cap on the last 30 days' EUR payments (rolling); null: none." example:"500"`
}

// Balance is a wallet's live on-chain balance.
type Balance struct {
	SOL  SOL  `json:"sol" doc:"Native SOL balance, in whole SOL." example:"1"`
	USDC USDC `json:"usdc" doc:"USDC balance of the wallet's token account on its network's USDC mint." example:"12.5"`
	// Every asset of the network the wallet holds, USDC first (always).
	Assets []AssetBalance `json:"assets" doc:"Every asset of the network (GET /assets) the wallet has an associated token account of, opened even when empty, USDC first and always; each in its own units."`
}

// AssetBalance is a wallet's holding of one asset.
type AssetBalance struct {
	Symbol string   `json:"symbol" doc:"The asset (GET /assets)." example:"PYUSD"`
	Mint   string   `json:"mint" doc:"Its mint." example:"2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo"`
	Amount Quantity `json:"amount" doc:"The amount held, in the asset (its decimals)." example:"3.5"`
}

// Agent is an agent wallet.
type Agent struct {
	Wallet
	Policy  Policy   `json:"policy" doc:"The wallet's spending policy."`
	Balance *Balance `json:"balance,omitempty" doc:"Live balance; only in the single-agent answer."`
}

func agentOf(w *wallet.Wallet) Agent {
	return Agent{Wallet: walletOf(w), Policy: policyOf(w.Policy())}
}

// policyOf is p as returned.
func policyOf(p policy.Policy) Policy {
	allow, labels := p.Allowlist, p.Labels
	if allow == nil {
		allow = []string{}
	}
	if labels == nil {
		labels = map[string]string{}
	}
	out := Policy{
		DailyLimitUSDC:        USDC(p.DailyLimit),
		MaxTxUSDC:             USDC(p.MaxTx),
		ApprovalThresholdUSDC: USDC(p.ApprovalThreshold),
		Allowlist:             allow,
		AllowlistLabels:       labels,
		WeeklyLimitUSDC:       usdcOf(p.WeeklyLimit),
		MonthlyLimitUSDC:      usdcOf(p.MonthlyLimit),
		MaxTxPerHour:          p.MaxTxPerHour,
		MaxTxPerDay:           p.MaxTxPerDay,
		ActiveHours:           activeHoursOf(p.ActiveHours),
		OutsideActiveHours:    string(cmp.Or(p.OutsideActiveHours, policy.OutsideBlock)),
		ApprovalsRequired:     p.Approvals(),
		Assets:                p.SpendableAssets(),
	}
	if e := p.EUR; e != nil {
		out.DailyLimitEUR, out.MaxTxEUR, out.ApprovalThresholdEUR = eurOf(&e.DailyLimit), eurOf(&e.MaxTx), eurOf(&e.ApprovalThreshold)
		out.WeeklyLimitEUR, out.MonthlyLimitEUR = eurOf(e.WeeklyLimit), eurOf(e.MonthlyLimit)
	}
	return out
}

// usdcOf is an optional amount as returned (nil: null).
func usdcOf(m *money.Micros[money.USD]) *USDC {
	if m == nil {
		return nil
	}
	u := USDC(*m)
	return &u
}

type createAgentInput struct {
	Body struct {
		Label  string       `json:"label" minLength:"1" maxLength:"100" doc:"Human label for the agent, 1 to 100 characters, without control or invisible formatting characters (bidi, zero-width)." example:"research-bot"`
		Policy *PolicyInput `json:"policy,omitempty" doc:"Spending policy; omitted fields take their defaults."`
	}
}

type agentOutput struct {
	Body Agent
}

type listAgentsOutput struct {
	Body struct {
		Agents     []Agent `json:"agents" doc:"A page of the account's agent wallets, newest first."`
		NextCursor *string `json:"next_cursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	}
}

// DefaultWalletPage is a page of wallets unless limit asks for 1 to 500;
// a page never passes MaxPageBytes of JSON either.
const DefaultWalletPage = 100

// walletPageQuery pages GET /agents and GET /wallets. Without parameters
// the answer is the first page: an account may hold 10,000 wallets, each
// with a 1,000-entry allowlist.
type walletPageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"500" doc:"Page size, 1 to 500; 100 when omitted. A page also ends early, with next_cursor, before it passes 1 MiB of JSON (wallets with long allowlists)." example:"100"`
	Cursor string `query:"cursor" maxLength:"200" doc:"Where to continue: the next_cursor of the previous page. Omit for the first page." example:"MTc2MzgxMjgwMDAwMDAwMF8wYzFkMmUzZi00YTViLTRjNmQtOGU3Zi04MDkxYTJiM2M0ZDU"`
	Q      string `query:"q" maxLength:"100" doc:"Only wallets whose label contains this text (any case) or whose address starts with it." example:"research"`
}

// walletPage answers a page of the wallets the caller reaches, as item
// makes them, and the cursor of the next page (nil on the last).
func walletPage[O any](ctx context.Context, s *server, in *walletPageQuery, item func(*wallet.Wallet) O) ([]O, *string, error) {
	pr := principal(ctx)
	if err := checkText("query", "q", in.Q); err != nil {
		return nil, nil, err
	}
	n := cmp.Or(in.Limit, DefaultWalletPage)
	p := wallet.Page{Limit: n + 1, Search: in.Q}
	if in.Cursor != "" {
		at, id, err := parseTimeCursor(in.Cursor)
		if err != nil {
			return nil, nil, err
		}
		p.AfterTime, p.AfterID = at, id
	}
	ws, err := wallet.List(ctx, s.DB, pr.AccountID, pr.Wallets, p)
	if err != nil {
		return nil, nil, s.fail(ctx, err)
	}
	out, next := page(ws, n, func(w *wallet.Wallet) string { return timeCursor(w.CreatedAt, w.ID) }, item)
	return out, next, nil
}

type agentIDInput struct {
	ID string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
}

func (s *server) registerAgents(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "create-agent",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents",
		Summary:     "Create an agent wallet",
		Description: "Makes a new Solana keypair server-side (the secret is sealed and never returned) with an optional policy. " +
			"An account holds at most 10,000 wallets by default, of which agent keys may create at most 100 (409 past either; admin keys and owners may still create the rest).",
		Tags:          []string{"Agents"},
		DefaultStatus: http.StatusCreated,
		MaxBodyBytes:  MaxBodyBytes + 1,
		Errors:        []int{400, 401, 409, 413, 422},
	}, s.createAgent)

	huma.Register(api, huma.Operation{
		OperationID: "list-agents",
		Method:      http.MethodGet,
		Path:        Prefix + "/agents",
		Summary:     "List agent wallets",
		Description: "The account's agent wallets, newest first, a page at a time: 100 unless `limit` says otherwise, and never more than 1 MiB of JSON (a page ends early, with `next_cursor`, before the wallet that would pass it). " +
			"Pass `next_cursor` as `cursor` for the next page (keyset, like GET /transactions); it is null on the last.",
		Tags:   []string{"Agents"},
		Errors: []int{400, 401, 422},
	}, s.listAgents)

	huma.Register(api, huma.Operation{
		OperationID: "get-agent",
		Method:      http.MethodGet,
		Path:        Prefix + "/agents/{id}",
		Summary:     "Get an agent wallet",
		Description: "The agent with its policy and live balance (read from the Solana RPC node, not cached).",
		Tags:        []string{"Agents"},
		Errors:      []int{401, 404, 502},
	}, s.getAgent)

	huma.Register(api, huma.Operation{
		OperationID: "update-policy",
		Method:      http.MethodPatch,
		Path:        Prefix + "/agents/{id}/policy",
		Summary:     "Change an agent's policy",
		Description: "Changes the given policy fields (omitted fields keep their value, and so do null ones except the optional rules: `weekly_limit_usdc`, `monthly_limit_usdc`, `max_tx_per_hour`, `max_tx_per_day` and `active_hours` sent as null are removed; `allowlist: []` clears the allowlist), validated like creation. " +
			"An agent key may only tighten a policy (403 naming the loosening otherwise): a limit, count or threshold lowered or newly set, active hours narrowed or newly set, `outside_active_hours` approve → block, `approvals_required` raised, never the reverse. " +
			"`approvals_required` above the account's owners and approvers is 422. " +
			"Sends decided after this answer use the new policy, and so does every approval approved after it. The change is in the audit log with the before and after. " +
			"Answers the agent without its balance.",
		Tags:         []string{"Agents"},
		MaxBodyBytes: MaxBodyBytes + 1,
		Errors:       []int{400, 401, 404, 413, 422},
	}, s.patchPolicy)

	huma.Register(api, huma.Operation{
		OperationID: "freeze-agent",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/freeze",
		Summary:     "Freeze an agent wallet",
		Description: "Every later send is blocked with reason `wallet_frozen`, and approvals approved while frozen are rejected. Freezing a frozen wallet changes nothing. Answers the agent without its balance.",
		Tags:        []string{"Agents"},
		Errors:      []int{401, 404},
	}, s.setState(wallet.Frozen))

	huma.Register(api, huma.Operation{
		OperationID: "unfreeze-agent",
		Method:      http.MethodPost,
		Path:        Prefix + "/agents/{id}/unfreeze",
		Summary:     "Unfreeze an agent wallet",
		Description: "Sends are evaluated by the policy again. Unfreezing an active wallet changes nothing. Answers the agent without its balance.",
		Tags:        []string{"Agents"},
		Errors:      []int{401, 404},
	}, s.setState(wallet.Active))
}

func (s *server) createAgent(ctx context.Context, in *createAgentInput) (*agentOutput, error) {
	p, err := policyFromInput(in.Body.Policy)
	if err != nil {
		return nil, err
	}
	keys, err := s.walletKeys(ctx)
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	by := wallet.Creator{Actor: pr.ActorID(), Key: uuid.NullUUID{UUID: pr.KeyID, Valid: pr.KeyID != uuid.Nil}, Agent: pr.Role == auth.RoleAgent}
	caps := wallet.Caps{Total: cmp.Or(s.MaxWallets, wallet.DefaultMaxWallets), ByAgents: cmp.Or(s.MaxWalletsByAgents, wallet.DefaultMaxByAgents)}
	w, err := wallet.CreateBy(ctx, s.DB, keys, pr.AccountID, by, in.Body.Label, p, caps)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "agent created", "wallet_id", w.ID, "account_id", pr.AccountID, "pubkey", w.Pubkey)
	return &agentOutput{Body: agentOf(&w)}, nil
}

// policyFromInput applies the defaults to a partial policy; wallet.Create
// validates the result.
func policyFromInput(in *PolicyInput) (policy.Policy, error) {
	if in == nil {
		return policy.Default(), nil
	}
	c, err := patchFromInput(in, "policy.")
	return policy.Default().Apply(c), err
}

// patchFromInput reads a partial policy: omitted (or null) fields keep
// their value; an empty allowlist clears it. Errors name the body's fields
// under prefix (where the policy sits in the body).
func patchFromInput(in *PolicyInput, prefix string) (policy.Patch, error) {
	var c policy.Patch
	for _, f := range []struct {
		name string
		in   *Amount
		out  **money.Micros[money.USD]
	}{
		{"daily_limit_usdc", in.DailyLimitUSDC, &c.DailyLimit},
		{"max_tx_usdc", in.MaxTxUSDC, &c.MaxTx},
		{"approval_threshold_usdc", in.ApprovalThresholdUSDC, &c.ApprovalThreshold},
	} {
		if f.in == nil {
			continue
		}
		m, err := f.in.Micros(prefix + f.name)
		if err != nil {
			return c, err
		}
		*f.out = &m
	}
	c.Allowlist = in.Allowlist
	c.Labels = in.AllowlistLabels
	for _, f := range []struct {
		name string
		in   Removable[Amount]
		out  **policy.Change[money.Micros[money.USD]]
	}{
		{"weekly_limit_usdc", in.WeeklyLimitUSDC, &c.WeeklyLimit},
		{"monthly_limit_usdc", in.MonthlyLimitUSDC, &c.MonthlyLimit},
	} {
		switch {
		case !f.in.Set:
		case f.in.Value == nil:
			*f.out = policy.Remove[money.Micros[money.USD]]()
		default:
			m, err := f.in.Value.Micros(prefix + f.name)
			if err != nil {
				return c, err
			}
			*f.out = policy.To(m)
		}
	}
	for _, f := range []struct {
		in  Removable[int]
		out **policy.Change[int]
	}{
		{in.MaxTxPerHour, &c.MaxTxPerHour},
		{in.MaxTxPerDay, &c.MaxTxPerDay},
	} {
		switch {
		case !f.in.Set:
		case f.in.Value == nil:
			*f.out = policy.Remove[int]()
		default:
			*f.out = policy.To(*f.in.Value)
		}
	}
	switch h := in.ActiveHours; {
	case !h.Set:
	case h.Value == nil:
		c.ActiveHours = policy.Remove[policy.ActiveHours]()
	default:
		parsed, err := policy.ParseActiveHours(h.Value.Timezone, h.Value.Days, h.Value.From, h.Value.To)
		var fe *policy.FieldError
		if errors.As(err, &fe) {
			return c, fieldError(prefix+fe.Field, fe.Msg)
		} else if err != nil {
			return c, err
		}
		c.ActiveHours = policy.To(parsed)
	}
	if in.OutsideActiveHours != nil {
		o := policy.Outside(*in.OutsideActiveHours)
		c.OutsideActiveHours = &o
	}
	c.ApprovalsRequired = in.ApprovalsRequired
	c.Assets = in.Assets
	for _, f := range []struct {
		name string
		in   Removable[Amount]
		out  **policy.Change[money.Micros[money.EUR]]
	}{
		{"daily_limit_eur", in.DailyLimitEUR, &c.EUR.DailyLimit},
		{"max_tx_eur", in.MaxTxEUR, &c.EUR.MaxTx},
		{"approval_threshold_eur", in.ApprovalThresholdEUR, &c.EUR.ApprovalThreshold},
		{"weekly_limit_eur", in.WeeklyLimitEUR, &c.EUR.WeeklyLimit},
		{"monthly_limit_eur", in.MonthlyLimitEUR, &c.EUR.MonthlyLimit},
	} {
		switch {
		case !f.in.Set:
		case f.in.Value == nil:
			*f.out = policy.Remove[money.Micros[money.EUR]]()
		default:
			m, err := f.in.Value.EURMicros(prefix + f.name)
			if err != nil {
				return c, err
			}
			*f.out = policy.To(m)
		}
	}
	return c, nil
}

type patchPolicyInput struct {
	ID   string `path:"id" doc:"Wallet id (UUIDv4)." example:"5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21"`
	Body PolicyInput
}

func (s *server) patchPolicy(ctx context.Context, in *patchPolicyInput) (*agentOutput, error) {
	c, err := patchFromInput(&in.Body, "")
	if err != nil {
		return nil, err
	}
	id, err := s.walletID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	pr := principal(ctx)
	var guard wallet.Guard
	if auth.Can(pr, "update-policy") == auth.TightenOnly {
		guard = func(before, after policy.Policy) error {
			if what := policy.Loosening(before, after); what != "" {
				return &auth.Denied{Op: "update-policy", Reason: pr.Describe() + " cannot " + what, Target: wallet.Target(id)}
			}
			return nil
		}
	}
	w, err := wallet.UpdatePolicy(ctx, s.DB, pr.AccountID, id, pr.ActorID(), c, guard)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	s.log.InfoContext(ctx, "policy updated", "wallet_id", w.ID, "by", pr.ActorID())
	return &agentOutput{Body: agentOf(&w)}, nil
}

func (s *server) setState(state wallet.State) func(context.Context, *agentIDInput) (*agentOutput, error) {
	return func(ctx context.Context, in *agentIDInput) (*agentOutput, error) {
		id, err := s.walletID(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		pr := principal(ctx)
		w, changed, err := wallet.SetState(ctx, s.DB, pr.AccountID, id, pr.ActorID(), state)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		if changed {
			s.log.InfoContext(ctx, "wallet state changed", "wallet_id", w.ID, "state", state, "by", pr.ActorID())
		}
		return &agentOutput{Body: agentOf(&w)}, nil
	}
}

func (s *server) listAgents(ctx context.Context, in *walletPageQuery) (*listAgentsOutput, error) {
	agents, next, err := walletPage(ctx, s, in, agentOf)
	if err != nil {
		return nil, err
	}
	out := &listAgentsOutput{}
	out.Body.Agents, out.Body.NextCursor = agents, next
	return out, nil
}

func (s *server) getAgent(ctx context.Context, in *agentIDInput) (*agentOutput, error) {
	w, err := s.wallet(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	b, err := s.balance(ctx, &w)
	if err != nil {
		return nil, err
	}
	a := agentOf(&w)
	a.Balance = b
	return &agentOutput{Body: a}, nil
}

// wallet loads a wallet the caller reaches; any other id is 404.
func (s *server) wallet(ctx context.Context, rawID string) (wallet.Wallet, error) {
	id, err := s.walletID(ctx, rawID)
	if err != nil {
		return wallet.Wallet{}, err
	}
	w, err := wallet.Get(ctx, s.DB, principal(ctx).AccountID, id)
	if err != nil {
		return wallet.Wallet{}, s.fail(ctx, err)
	}
	return w, nil
}

func (s *server) balance(ctx context.Context, w *wallet.Wallet) (*Balance, error) {
	b, err := s.Balances.Balance(ctx, principal(ctx).Network, w.Pubkey)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return balanceOf(principal(ctx).Network, b), nil
}

// balanceOf is b as answered: USDC, then the network's other assets the
// wallet has an account of.
func balanceOf(n solana.Network, b solana.Balance) *Balance {
	out := &Balance{SOL: SOL(b.Lamports), USDC: USDC(min(b.Units(n.USDCMint()), math.MaxInt64))}
	for _, t := range b.Tokens {
		out.Assets = append(out.Assets, AssetBalance{Symbol: t.Symbol, Mint: t.Mint.String(),
			Amount: Quantity{units: int64(min(t.Units, math.MaxInt64)), decimals: int(t.Decimals)}})
	}
	return out
}

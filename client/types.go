package client

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// Amount is an amount in whole units of an asset (USDC unless said
// otherwise) as a decimal string ("1.5"), sent as a JSON number without
// going through float64.
type Amount string

var decimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// MarshalJSON writes the amount as a JSON number.
func (a Amount) MarshalJSON() ([]byte, error) {
	if !decimal.MatchString(string(a)) {
		return nil, fmt.Errorf("amount %q is not a decimal number", string(a))
	}
	return []byte(a), nil
}

// Policy is a wallet's spending policy.
type Policy struct {
	DailyLimitUSDC        json.Number `json:"daily_limit_usdc"`
	MaxTxUSDC             json.Number `json:"max_tx_usdc"`
	ApprovalThresholdUSDC json.Number `json:"approval_threshold_usdc"`
	Allowlist             []string    `json:"allowlist"`
	// AllowlistLabels names some allowlist entries (an address book).
	AllowlistLabels map[string]string `json:"allowlist_labels"`
	// The optional rules; nil: the rule does not apply.
	WeeklyLimitUSDC  *json.Number `json:"weekly_limit_usdc"`  // the last 7 days' total (rolling)
	MonthlyLimitUSDC *json.Number `json:"monthly_limit_usdc"` // the last 30 days' total (rolling)
	MaxTxPerHour     *int         `json:"max_tx_per_hour"`    // payments sent or parked in the last hour
	MaxTxPerDay      *int         `json:"max_tx_per_day"`     // payments sent or parked in the last 24 hours
	ActiveHours      *ActiveHours `json:"active_hours"`       // when the agent may pay
	// OutsideActiveHours is what becomes of a payment outside
	// ActiveHours: "block" or "approve" (parked for a human).
	OutsideActiveHours string `json:"outside_active_hours"`
	// ApprovalsRequired is how many distinct people must approve a parked
	// payment before it is sent (1 unless set higher).
	ApprovalsRequired int `json:"approvals_required"`
	// Assets are the symbols (of ListAssets) the wallet may spend; a
	// payment in another is blocked with ReasonAssetNotAllowed. USD
	// stablecoins count together under the USDC limits at 1:1, EUR ones
	// under the EUR limits.
	Assets []string `json:"assets"`
	// The EUR limits, in euros; nil: 0, so no EUR spending (for the
	// optional weekly and monthly ones: none).
	DailyLimitEUR        *json.Number `json:"daily_limit_eur"`
	MaxTxEUR             *json.Number `json:"max_tx_eur"`
	ApprovalThresholdEUR *json.Number `json:"approval_threshold_eur"`
	WeeklyLimitEUR       *json.Number `json:"weekly_limit_eur"`
	MonthlyLimitEUR      *json.Number `json:"monthly_limit_eur"`
}

// ActiveHours is when a wallet's agent may pay: on Days ("mon" … "sun"),
// from From (inclusive) to To (exclusive), "HH:MM" on the wall clock of
// the IANA zone Timezone. From after To runs overnight into the next day.
type ActiveHours struct {
	Timezone string   `json:"timezone"`
	Days     []string `json:"days"`
	From     string   `json:"from"`
	To       string   `json:"to"`
}

// Block reasons: the rule a 403 BlockedError names.
const (
	ReasonWalletFrozen        = "wallet_frozen"
	ReasonAssetNotAllowed     = "asset_not_allowed"
	ReasonRecipientNotAllowed = "recipient_not_allowed"
	ReasonExceedsMaxTx        = "exceeds_max_tx"
	ReasonExceedsDailyLimit   = "exceeds_daily_limit"
	ReasonExceedsWeeklyLimit  = "exceeds_weekly_limit"
	ReasonExceedsMonthlyLimit = "exceeds_monthly_limit"
	ReasonExceedsVelocity     = "exceeds_velocity"
	ReasonOutsideActiveHours  = "outside_active_hours"
)

// ReasonAlreadyPaid is the reason of a 409 ChallengePaidError: the
// account already paid the seller's challenge.
const ReasonAlreadyPaid = "already_paid"

// PolicyInput is a policy in a create or a patch: nil fields are sent as
// null or left out (defaults on create, unchanged on a patch). A non-nil
// Allowlist replaces the allowlist and a non-nil AllowlistLabels the
// labels, empty ones included (which clear them): so neither omits empty.
//
// The optional rules (WeeklyLimitUSDC … ActiveHours) and the EUR limits
// are left out when nil (none on create, unchanged on a patch); Remove
// names those to remove (sent as null). OutsideActiveHours "" is left out
// too, and so is a nil Assets (["USDC"] on create, unchanged on a patch).
type PolicyInput struct {
	DailyLimitUSDC        *Amount           `json:"daily_limit_usdc,omitempty"`
	MaxTxUSDC             *Amount           `json:"max_tx_usdc,omitempty"`
	ApprovalThresholdUSDC *Amount           `json:"approval_threshold_usdc,omitempty"`
	Allowlist             []string          `json:"allowlist"`
	AllowlistLabels       map[string]string `json:"allowlist_labels"`
	WeeklyLimitUSDC       *Amount           `json:"weekly_limit_usdc,omitempty"`
	MonthlyLimitUSDC      *Amount           `json:"monthly_limit_usdc,omitempty"`
	MaxTxPerHour          *int              `json:"max_tx_per_hour,omitempty"`
	MaxTxPerDay           *int              `json:"max_tx_per_day,omitempty"`
	ActiveHours           *ActiveHours      `json:"active_hours,omitempty"`
	OutsideActiveHours    string            `json:"outside_active_hours,omitempty"`
	// ApprovalsRequired, when not 0, sets how many distinct people must
	// approve (1 to the account's owners and approvers; agent keys may
	// only raise it).
	ApprovalsRequired int `json:"approvals_required,omitempty"`
	// Assets, when not nil, replaces the symbols the wallet may spend
	// (agent keys may only remove entries).
	Assets []string `json:"assets,omitempty"`
	// The EUR limits, in euros. Setting one where none were leaves the
	// others 0 (an unset ApprovalThresholdEUR parks every EUR payment).
	DailyLimitEUR        *Amount `json:"daily_limit_eur,omitempty"`
	MaxTxEUR             *Amount `json:"max_tx_eur,omitempty"`
	ApprovalThresholdEUR *Amount `json:"approval_threshold_eur,omitempty"`
	WeeklyLimitEUR       *Amount `json:"weekly_limit_eur,omitempty"`
	MonthlyLimitEUR      *Amount `json:"monthly_limit_eur,omitempty"`
	// Remove lists optional rules to remove, by their JSON names:
	// weekly_limit_usdc, monthly_limit_usdc, max_tx_per_hour,
	// max_tx_per_day, active_hours, and the EUR limits (daily_limit_eur,
	// max_tx_eur, approval_threshold_eur, weekly_limit_eur,
	// monthly_limit_eur: removing all of them is no EUR spending).
	Remove []string `json:"-"`
}

// MarshalJSON writes the fields, and null for each rule in Remove.
func (p PolicyInput) MarshalJSON() ([]byte, error) {
	type fields PolicyInput
	b, err := json.Marshal(fields(p))
	if err != nil || len(p.Remove) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, name := range p.Remove {
		m[name] = json.RawMessage("null")
	}
	return json.Marshal(m)
}

// Wallet is a wallet of the account.
type Wallet struct {
	ID        string    `json:"id"`
	Label     string    `json:"label"`
	Kind      string    `json:"kind"`
	Pubkey    string    `json:"pubkey"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	// Signer is where the wallet's key lives: local, pkcs11, vault or awskms.
	Signer string `json:"signer"`
	// ExportedAt is when an owner exported the wallet's secret, if ever.
	ExportedAt *time.Time `json:"exported_at,omitempty"`
}

// Balance is a wallet's live balance.
type Balance struct {
	SOL  json.Number `json:"sol"`
	USDC json.Number `json:"usdc"`
	// Assets: every asset the wallet has an account of, USDC first.
	Assets []AssetBalance `json:"assets"`
}

// AssetBalance is a holding of one asset, in its units.
type AssetBalance struct {
	Symbol string      `json:"symbol"`
	Mint   string      `json:"mint"`
	Amount json.Number `json:"amount"`
}

// Agent is an agent wallet with its policy (and its balance in GetAgent).
type Agent struct {
	Wallet
	Policy  Policy   `json:"policy"`
	Balance *Balance `json:"balance,omitempty"`
}

// Send outcomes.
const (
	StatusSent            = "sent"
	StatusPendingApproval = "pending_approval"
)

// SendRequest is a payment: to an address, an amount of an asset, an
// optional memo. Asset is a symbol of ListAssets (any case; "" sends
// USDC); the wallet's policy must list it. IdempotencyKey makes it safe to
// retry (one is made when empty).
type SendRequest struct {
	To             string  `json:"to"`
	Amount         Amount  `json:"amount"`
	Asset          string  `json:"asset,omitempty"`
	Memo           *string `json:"memo,omitempty"`
	IdempotencyKey string  `json:"-"`
}

// SendResult is a send that was not blocked: sent (Signature) or waiting
// for a human (ApprovalID). On an idempotent replay TransactionStatus says
// where a sent payment stands now.
type SendResult struct {
	Status            string `json:"status"`
	Signature         string `json:"signature,omitempty"`
	ApprovalID        string `json:"approval_id,omitempty"`
	TransactionStatus string `json:"transaction_status,omitempty"`
	Message           string `json:"message,omitempty"`
	// Replayed: the stored answer to an earlier request with this key.
	Replayed bool `json:"-"`
	// IdempotencyKey is the key the send went under.
	IdempotencyKey string `json:"-"`
}

// Preview is what a send would do now, the rule that decides, and the
// figures behind it.
type Preview struct {
	Outcome string  `json:"outcome"`
	Reason  *string `json:"reason"`
	// Asset is the asset previewed; Currency its currency ("USD" meets the
	// USDC limits, "EUR" the EUR ones).
	Asset    string `json:"asset"`
	Currency string `json:"currency"`
	// Rule is the policy field whose rule decides (daily_limit_usdc,
	// max_tx_per_hour, active_hours, approval_threshold_usdc, …; "state"
	// for a frozen wallet); nil when sent.
	Rule                  *string      `json:"rule"`
	DailyLimitUSDC        json.Number  `json:"daily_limit_usdc"`
	SpentTodayUSDC        json.Number  `json:"spent_today_usdc"`
	RemainingTodayUSDC    json.Number  `json:"remaining_today_usdc"`
	ApprovalThresholdUSDC json.Number  `json:"approval_threshold_usdc"`
	MaxTxUSDC             json.Number  `json:"max_tx_usdc"`
	WeeklyLimitUSDC       *json.Number `json:"weekly_limit_usdc"`
	SpentWeekUSDC         json.Number  `json:"spent_week_usdc"`
	RemainingWeekUSDC     *json.Number `json:"remaining_week_usdc"`
	MonthlyLimitUSDC      *json.Number `json:"monthly_limit_usdc"`
	SpentMonthUSDC        json.Number  `json:"spent_month_usdc"`
	RemainingMonthUSDC    *json.Number `json:"remaining_month_usdc"`
	MaxTxPerHour          *int         `json:"max_tx_per_hour"`
	PaymentsLastHour      int          `json:"payments_last_hour"`
	MaxTxPerDay           *int         `json:"max_tx_per_day"`
	PaymentsLastDay       int          `json:"payments_last_day"`
	ActiveHours           *ActiveHours `json:"active_hours"`
	OutsideActiveHours    string       `json:"outside_active_hours"`
	WithinActiveHours     *bool        `json:"within_active_hours"`
	// ApprovalsRequired is how many people would have to approve it when
	// it waits for approval.
	ApprovalsRequired int `json:"approvals_required"`
	// The EUR day: DailyLimitEUR nil is no EUR spending.
	DailyLimitEUR     *json.Number `json:"daily_limit_eur"`
	SpentTodayEUR     json.Number  `json:"spent_today_eur"`
	RemainingTodayEUR json.Number  `json:"remaining_today_eur"`
}

// Transaction is an on-chain transfer from a wallet.
type Transaction struct {
	ID        string `json:"id"`
	Signature string `json:"signature"`
	// Kind is the asset's symbol in lower case for a send or a deposit
	// (usdc, usdt, pyusd, usdg, eurc), x402 for an x402 payment, sol for
	// SOL that came in.
	Kind string `json:"kind"`
	// Asset is what moved: a symbol of ListAssets, or SOL; Amount is in
	// its units.
	Asset        string      `json:"asset"`
	Direction    string      `json:"direction"`
	Amount       json.Number `json:"amount"`
	Counterparty string      `json:"counterparty"`
	Status       string      `json:"status"`
	Memo         *string     `json:"memo"`
	CreatedAt    time.Time   `json:"created_at"`
	WalletID     string      `json:"wallet_id"`
	ApprovalID   *string     `json:"approval_id"`
	// FeeLamports is the network fee the wallet pays when it lands (null
	// for transactions signed before fees were recorded).
	FeeLamports *int64 `json:"fee_lamports"`
	// FeePayer is the account's fee payer that paid the fee (and a new
	// recipient account's rent); nil when the wallet paid.
	FeePayer *string `json:"fee_payer"`
	// Attempts counts the transactions signed for the payment (one more
	// each time the current one expired unseen); PreviousSignatures are
	// the expired ones', oldest first.
	Attempts           int      `json:"attempts"`
	PreviousSignatures []string `json:"previous_signatures"`
	// Resource is what an x402 payment (Kind "x402") bought.
	Resource *string `json:"resource,omitempty"`
}

// Approval is a payment parked for a human.
type Approval struct {
	ID                string      `json:"id"`
	WalletID          string      `json:"wallet_id"`
	AgentLabel        string      `json:"agent_label"`
	Amount            json.Number `json:"amount"`
	Asset             string      `json:"asset"` // what it pays, Amount in its units
	To                string      `json:"to"`
	Memo              *string     `json:"memo"`
	Status            string      `json:"status"`
	Reason            *string     `json:"reason"`
	ReasonDetail      *string     `json:"reason_detail"`
	Signature         *string     `json:"signature"`
	RequestedBy       *string     `json:"requested_by"`
	ApprovedBy        *string     `json:"approved_by"`
	RejectedBy        *string     `json:"rejected_by"`
	Note              *string     `json:"note"`
	CreatedAt         time.Time   `json:"created_at"`
	ExpiresAt         time.Time   `json:"expires_at"`
	DecidedAt         *time.Time  `json:"decided_at"`
	TransactionStatus *string     `json:"transaction_status"`
	// Approvals are who approved so far, oldest first (one per person);
	// ApprovalsNeeded is how many distinct people must (the wallet's
	// approvals_required while pending).
	Approvals       []ApprovalVote `json:"approvals"`
	ApprovalsNeeded int            `json:"approvals_needed"`
}

// ApprovalVote is one person's approve of an approval.
type ApprovalVote struct {
	// By is who approved: key_…, user:<address> or slack:<member id>.
	By string `json:"by"`
	// Person is the person it counts as (user:<address>), or nil.
	Person *string   `json:"person"`
	At     time.Time `json:"at"`
	Note   *string   `json:"note"`
}

// ApprovalContext is what a human needs beside an approval.
type ApprovalContext struct {
	Wallet    Wallet `json:"wallet"`
	Recipient struct {
		Address        string  `json:"address"`
		FirstPayment   bool    `json:"first_payment"`
		OnAllowlist    bool    `json:"on_allowlist"`
		AllowlistEmpty bool    `json:"allowlist_empty"`
		Label          *string `json:"label"`
	} `json:"recipient"`
	// Requester is who made the send: a key (ID key_…, with its label and
	// prefix) or a dashboard user (ID user:<address>, no prefix).
	Requester *struct {
		ID     string  `json:"id"`
		Label  *string `json:"label"`
		Prefix *string `json:"prefix"`
	} `json:"requester"`
	IfApprovedNow struct {
		Outcome                 string      `json:"outcome"`
		Reason                  *string     `json:"reason"`
		RemainingTodayUSDC      json.Number `json:"remaining_today_usdc"`
		RemainingTodayAfterUSDC json.Number `json:"remaining_today_after_usdc"`
		// The EUR day's figures, only for a payment in a EUR stablecoin.
		RemainingTodayEUR      *json.Number `json:"remaining_today_eur"`
		RemainingTodayAfterEUR *json.Number `json:"remaining_today_after_eur"`
	} `json:"if_approved_now"`
	Webhook struct {
		Event      json.RawMessage `json:"event"`
		Deliveries []struct {
			EndpointID string `json:"endpoint_id"`
			URL        string `json:"url"`
			Format     string `json:"format"`
			DeliveryID string `json:"delivery_id"`
			Status     string `json:"status"`
			Attempts   int    `json:"attempts"`
		} `json:"deliveries"`
	} `json:"webhook"`
}

// AuditEntry is one link of the account's hash-chained audit log.
type AuditEntry struct {
	ID       string          `json:"id"`
	Seq      int64           `json:"seq"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`
	Action   string          `json:"action"`
	Target   string          `json:"target"`
	Details  json.RawMessage `json:"details"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// AuditVerification is how far an account's audit chain holds.
type AuditVerification struct {
	Intact          bool  `json:"intact"`
	FromSeq         int64 `json:"from_seq"` // the checkpoint this call started after
	Entries         int   `json:"entries"`  // read after FromSeq
	VerifiedThrough int64 `json:"verified_through_seq"`
	More            bool  `json:"more"` // entries remain past VerifiedThrough: call again
	FirstBreak      *struct {
		Seq     int64  `json:"seq"`
		EntryID string `json:"entry_id"`
		Problem string `json:"problem"`
	} `json:"first_break,omitempty"`
	VerifiedAt time.Time `json:"verified_at"`
}

// Analytics are an account's aggregates over a range of UTC days.
type Analytics struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Spend []struct {
		Day          string  `json:"day"`
		WalletID     string  `json:"wallet_id"`
		AmountUSDC   float64 `json:"amount_usdc"`
		Transactions int     `json:"transactions"`
		// FeeLamports: the network fees of the day's confirmed transactions.
		FeeLamports int64 `json:"fee_lamports"`
	} `json:"spend"`
	Wallets []struct {
		ID             string  `json:"id"`
		Label          string  `json:"label"`
		DailyLimitUSDC float64 `json:"daily_limit_usdc"`
	} `json:"wallets"`
	Approvals []struct {
		Day                   string   `json:"day"`
		Approved              int      `json:"approved"`
		Rejected              int      `json:"rejected"`
		Expired               int      `json:"expired"`
		MedianDecisionSeconds *float64 `json:"median_decision_seconds"`
	} `json:"approvals"`
	MedianDecisionSeconds *float64 `json:"median_decision_seconds"`
	Blocked               []struct {
		Reason string `json:"reason"`
		Count  int    `json:"count"`
	} `json:"blocked"`
	// Received: confirmed deposits per day, wallet and asset (a symbol
	// of ListAssets, or SOL), days ascending; Amount is in whole units of
	// that asset.
	Received []struct {
		Day      string      `json:"day"`
		WalletID string      `json:"wallet_id"`
		Asset    string      `json:"asset"`
		Amount   json.Number `json:"amount"`
		Deposits int         `json:"deposits"`
	} `json:"received"`
}

// KeyAccess is what a key may do.
type KeyAccess struct {
	Role       string   `json:"role"`
	WalletIDs  []string `json:"wallet_ids"`
	Label      *string  `json:"label"`
	CanApprove bool     `json:"can_approve"`
}

// Key is an API key as listed (never the key itself).
type Key struct {
	ID     string `json:"id"`
	Prefix string `json:"prefix"`
	KeyAccess
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	ReplacedBy *string    `json:"replaced_by"`
	// CreatedBy is who made it: key_…, user:<address>, or nil for the
	// command line.
	CreatedBy *string `json:"created_by"`
}

// NewKey is a key as made: the only answer with the full key.
type NewKey struct {
	ID        string    `json:"id"`
	Key       string    `json:"key"`
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	KeyAccess
	Replaces  *string `json:"replaces,omitempty"`
	CreatedBy *string `json:"created_by"`
}

// KeyRequest is what a new key may do (all optional: an agent key of
// every wallet).
type KeyRequest struct {
	Role      string   `json:"role,omitempty"`
	WalletIDs []string `json:"wallet_ids,omitempty"`
	Label     *string  `json:"label,omitempty"`
}

// WebhookEndpoint is a receiver of the account's events.
type WebhookEndpoint struct {
	ID                      string     `json:"id"`
	URL                     string     `json:"url"`
	Format                  string     `json:"format"`
	Events                  []string   `json:"events"`
	Description             *string    `json:"description"`
	Enabled                 bool       `json:"enabled"`
	SlackApprovers          []string   `json:"slack_approvers"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	// Secret is set only by create and secret rotation.
	Secret string `json:"secret,omitempty"`
}

// EndpointSettings are an endpoint's settings in a create or a patch; nil
// fields are left out.
type EndpointSettings struct {
	URL            *string  `json:"url,omitempty"`
	Format         *string  `json:"format,omitempty"`
	Events         []string `json:"events,omitempty"`
	Description    *string  `json:"description,omitempty"`
	Enabled        *bool    `json:"enabled,omitempty"`
	SlackApprovers []string `json:"slack_approvers,omitempty"`
}

// Delivery is one event's delivery to one endpoint (with its attempts in
// GetDelivery).
type Delivery struct {
	ID            string     `json:"id"`
	EndpointID    string     `json:"endpoint_id"`
	EventID       string     `json:"event_id"`
	Event         string     `json:"event"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	ReplayOf      *string    `json:"replay_of"`
	CreatedAt     time.Time  `json:"created_at"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	CompletedAt   *time.Time `json:"completed_at"`
	// Payload is the event as POSTed (GetDelivery only).
	Payload    json.RawMessage `json:"payload,omitempty"`
	AttemptLog []struct {
		N            int       `json:"n"`
		At           time.Time `json:"at"`
		StatusCode   *int      `json:"status_code"`
		LatencyMs    int       `json:"latency_ms"`
		Error        *string   `json:"error"`
		ResponseHead *string   `json:"response_head"`
	} `json:"attempt_log,omitempty"`
}

// User is a dashboard user of the account.
type User struct {
	Address   string    `json:"address"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	// LiveKeys counts the live keys that descend from the user; removing
	// the user revokes them.
	LiveKeys int `json:"live_keys"`
	// SlackUserID is the Slack member whose clicks on approval messages
	// count as this person, or nil.
	SlackUserID *string `json:"slack_user_id"`
}

// Page asks for a page of a list: Limit rows after Cursor (a previous
// page's NextCursor); zero values take the defaults.
type Page struct {
	Limit  int
	Cursor string
}

func (p Page) query() url.Values {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", fmt.Sprint(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// FeePayer is the account's fee payer (fee sponsorship).
type FeePayer struct {
	Enabled bool `json:"enabled"`
	// Address is nil until it is first enabled.
	Address *string `json:"address"`
	// SOL is its live balance; nil before it has an address.
	SOL               *json.Number `json:"sol"`
	DailyBudgetSOL    json.Number  `json:"daily_budget_sol"`
	SpentTodaySOL     json.Number  `json:"spent_today_sol"`
	TransactionsToday int          `json:"transactions_today"`
	// Low: enabled and its SOL is below one day's budget.
	Low bool `json:"low"`
}

// X402PayResult is an x402 payment's answer.
type X402PayResult struct {
	Status    string `json:"status"` // signed or pending_approval
	PaymentID string `json:"payment_id"`
	// Header and PaymentSignature, when signed: retry the seller's URL
	// with this header and value.
	Header           string      `json:"header,omitempty"`
	PaymentSignature string      `json:"payment_signature,omitempty"`
	Amount           json.Number `json:"amount"`
	PayTo            string      `json:"pay_to"`
	Network          string      `json:"network"`
	Resource         string      `json:"resource"`
	ApprovalID       string      `json:"approval_id,omitempty"`
	Replayed         bool        `json:"-"`
	IdempotencyKey   string      `json:"-"`
}

// X402Payment is an x402 payment as the service keeps it.
type X402Payment struct {
	ID          string      `json:"id"`
	WalletID    string      `json:"wallet_id"`
	State       string      `json:"state"`
	Amount      json.Number `json:"amount"`
	Asset       string      `json:"asset"`
	PayTo       string      `json:"pay_to"`
	Network     string      `json:"network"`
	Resource    string      `json:"resource"`
	Description *string     `json:"description"`
	Signature   *string     `json:"signature"`
	Error       *string     `json:"error"`
	ApprovalID  *string     `json:"approval_id"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
}

// WalletExport is an owner's request to export a wallet's secret.
type WalletExport struct {
	ID          string     `json:"id"`
	WalletID    string     `json:"wallet_id"`
	State       string     `json:"state"`
	RequestedBy string     `json:"requested_by"`
	RequestedAt time.Time  `json:"requested_at"`
	DecidedBy   *string    `json:"decided_by,omitempty"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
	// RecipientPublicKey is the X25519 key (base64) the secret is sealed
	// to, as the owner who asked gave it.
	RecipientPublicKey string     `json:"recipient_public_key"`
	SealedAt           *time.Time `json:"sealed_at,omitempty"`
	VoidReason         *string    `json:"void_reason,omitempty"`
	// SealedSecret is the wallet's seed sealed (HPKE) to the recipient
	// key, base64, once exported.
	SealedSecret *string `json:"sealed_secret,omitempty"`
}

// AccountSettings are the account's settings: the smallest deposit of
// each currency that is announced (tx.received); smaller ones are
// recorded and listed with below_minimum.
type AccountSettings struct {
	DepositMinUSDC json.Number `json:"deposit_min_usdc"`
	DepositMinEUR  json.Number `json:"deposit_min_eur"`
	DepositMinSOL  json.Number `json:"deposit_min_sol"`
}

// AccountSettingsInput changes the account's settings: the fields that
// are set.
type AccountSettingsInput struct {
	DepositMinUSDC *Amount `json:"deposit_min_usdc,omitempty"`
	DepositMinEUR  *Amount `json:"deposit_min_eur,omitempty"`
	DepositMinSOL  *Amount `json:"deposit_min_sol,omitempty"`
}

// BalanceHistory is a wallet's balance over time: a series per asset
// asked (with "all", the network's assets in ListAssets' order, then SOL).
type BalanceHistory struct {
	WalletID string          `json:"wallet_id"`
	Series   []BalanceSeries `json:"series"`
}

// BalanceSeries is a wallet's balance of one asset (a symbol of
// ListAssets, or SOL), oldest first; Decimals is the asset's (SOL 9).
type BalanceSeries struct {
	Asset    string         `json:"asset"`
	Decimals int            `json:"decimals"`
	Points   []BalancePoint `json:"points"`
}

// BalancePoint is a wallet's balance of Asset at an instant, from its
// ledger: what its accounts of the asset held after the last change at or
// before At, in whole units.
type BalancePoint struct {
	At     time.Time   `json:"at"`
	Asset  string      `json:"asset"`
	Amount json.Number `json:"amount"`
}

// BalanceDifferences is a page of the differences between a wallet's
// ledger and the chain, newest first.
type BalanceDifferences struct {
	WalletID string              `json:"wallet_id"`
	Items    []BalanceDifference `json:"items"`
	// NextCursor is the next page's cursor (nil on the last page).
	NextCursor *string `json:"next_cursor"`
}

// BalanceDifference is money the ledger did not explain: an
// unexplained_outflow (it left the wallet in a transaction the service did
// not make: To and Signature say where and which), or a snapshot (the
// daily comparison found the chain's balance, Chain, apart from the
// ledger's, Ledger).
type BalanceDifference struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // unexplained_outflow or snapshot
	// Asset is a symbol of ListAssets, or SOL; Amount is signed, in whole
	// units of that asset: negative, the chain holds less than the service
	// accounted for.
	Asset     string       `json:"asset"`
	Amount    json.Number  `json:"amount"`
	At        time.Time    `json:"at"`
	Slot      uint64       `json:"slot"`
	Signature *string      `json:"signature"`
	To        *string      `json:"to"`
	Chain     *json.Number `json:"chain"`
	Ledger    *json.Number `json:"ledger"`
}

// Assets are the tokens of a network.
type Assets struct {
	Network string  `json:"network"`
	Assets  []Asset `json:"assets"`
}

// Asset is one token: TokenProgram is "token" or "token-2022"; Currency
// "USD" or "EUR".
type Asset struct {
	Symbol       string `json:"symbol"`
	Mint         string `json:"mint"`
	TokenProgram string `json:"token_program"`
	Decimals     int    `json:"decimals"`
	Currency     string `json:"currency"`
}

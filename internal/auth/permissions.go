package auth

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Role is what a principal may do, by the permission table.
type Role string

// Roles of API keys. An admin key may do everything; an agent key spends
// within its wallet's rules and may tighten them, never loosen them.
const (
	RoleAgent Role = "agent"
	RoleAdmin Role = "admin"
)

// Roles lists every role, in the order the permission table prints them:
// API keys' first, then dashboard users'.
var Roles = []Role{RoleAgent, RoleAdmin, RoleOwner, RoleApprover, RoleViewer}

// Access is what one role may do with one operation.
type Access string

// Access values. Scoping is separate: a principal limited to some wallets
// reaches only those on every operation marked Wallets, whatever its
// access (other wallets are not found; lists leave them out).
const (
	// Refused: 403, and nothing changes.
	Refused Access = "refused"
	// Allowed on what the principal reaches.
	Allowed Access = "allowed"
	// TightenOnly: allowed when the change only tightens the policy; a
	// change that loosens anything is refused whole.
	TightenOnly Access = "tighten only"
	// OwnKeys: only the key itself and the keys it created (to read: also
	// the keys it replaced, its rotation lineage).
	OwnKeys Access = "own keys only"
	// UnscopedOnly: allowed unless the principal is limited to some
	// wallets (a scoped key cannot create wallets outside its scope).
	UnscopedOnly Access = "unscoped keys only"
	// NotOwners: allowed on approvers and viewers; adding an owner,
	// making a user an owner or no longer one, or removing an owner is
	// refused (CheckOwnerChange).
	NotOwners Access = "approvers and viewers only"
)

// Rule is one row of the permission table.
type Rule struct {
	// What names the operation in a refusal: "this key's role (agent)
	// cannot <What>".
	What string
	// Wallets: the operation acts on or lists wallets' items, so a
	// principal's wallet scope applies.
	Wallets bool
	// Access by role; a role missing from the map is refused.
	Access map[Role]Access
	// Note is a rule the handler applies within the access, for the
	// printed table.
	Note string
}

// access is a row's Access by role: admin keys and dashboard owners may do
// everything; agent keys, approvers and viewers as given.
func access(agent, approver, viewer Access) map[Role]Access {
	return map[Role]Access{RoleAgent: agent, RoleAdmin: Allowed, RoleOwner: Allowed, RoleApprover: approver, RoleViewer: viewer}
}

// Rows' access by kind: what every principal may read; what agents may
// also do (within their rules); what only approvers (and up) may do;
// what only admins and owners may do.
var (
	readAll     = access(Allowed, Allowed, Allowed)
	humansRead  = access(Refused, Allowed, Allowed)
	agentsToo   = access(Allowed, Refused, Refused)
	approvers   = access(Refused, Allowed, Refused)
	adminsOnly  = access(Refused, Refused, Refused)
	agentsTight = access(TightenOnly, Refused, Refused)
	// ownersOnly: dashboard owners, no key (admin keys included).
	ownersOnly = map[Role]Access{RoleAgent: Refused, RoleAdmin: Refused, RoleOwner: Allowed, RoleApprover: Refused, RoleViewer: Refused}
	// usersByOwners: owners manage every user; admin keys only approvers
	// and viewers.
	usersByOwners = map[Role]Access{RoleAgent: Refused, RoleAdmin: NotOwners, RoleOwner: Allowed, RoleApprover: Refused, RoleViewer: Refused}
	// sessionsOnly: every dashboard role, no key (admin keys included).
	sessionsOnly = map[Role]Access{RoleAgent: Refused, RoleAdmin: Refused, RoleOwner: Allowed, RoleApprover: Allowed, RoleViewer: Allowed}
)

// Notes of rows that agent keys read less of: people and keys are the
// humans' business (list-users, list-keys), so the audit log is read by an
// allowlist of targets and a person is named by kind only.
const (
	personHidden   = "agent keys read a person who decided as `user` or `slack`, without the address or id"
	agentAuditView = "agent keys read only entries about their wallets, those wallets' approvals and their own keys (their lineage and the keys they made), " +
		"and their own refusals; never users, sessions, webhook endpoints or other keys, and a person as `user` or `slack`, without the address or id"
)

// Permissions is the permission table: every public operation, by its
// OpenAPI operationId, and every dashboard operation outside the document
// (httpapi.DashboardOperations), and what each role may do with it. It is the one
// place the rules live: the API enforces it before any handler runs, and
// docs/permissions.md prints it (a test keeps both equal). An operation
// missing here is refused to everyone.
var Permissions = map[string]Rule{
	"list-agents": {What: "list wallets", Wallets: true, Access: readAll},
	"create-agent": {What: "create wallets", Wallets: true, Access: access(UnscopedOnly, Refused, Refused),
		Note: "agent keys together create at most 100 wallets per account by default (`MAX_WALLETS_BY_AGENT_KEYS`; 409 past it)"},
	"get-agent":      {What: "read wallets", Wallets: true, Access: readAll},
	"update-policy":  {What: "loosen a policy", Wallets: true, Access: agentsTight},
	"freeze-agent":   {What: "freeze wallets", Wallets: true, Access: access(Allowed, Allowed, Refused)},
	"unfreeze-agent": {What: "unfreeze wallets", Wallets: true, Access: adminsOnly},
	"list-wallets":   {What: "list wallets", Wallets: true, Access: readAll},
	// Test funds on a local chain only; still a human's or an admin's act.
	"fund-wallet":                {What: "fund wallets on a local chain", Wallets: true, Access: adminsOnly},
	"get-wallet-balance":         {What: "read balances", Wallets: true, Access: readAll},
	"get-wallet-balance-history": {What: "read balances", Wallets: true, Access: readAll},
	// Public facts of the network (mints, programs, decimals).
	"list-assets": {What: "list assets", Access: readAll},
	// Movements the service did not make: what a wallet's readers audit.
	"list-wallet-balance-differences": {What: "read balances", Wallets: true, Access: readAll},
	"send":                            {What: "send", Wallets: true, Access: agentsToo},
	"preview-send":                    {What: "preview sends", Wallets: true, Access: readAll},
	"list-transactions":               {What: "list transactions", Wallets: true, Access: readAll},
	// Paying an x402 challenge is a send to the seller.
	"x402-pay":           {What: "pay x402 challenges", Wallets: true, Access: agentsToo},
	"get-x402-payment":   {What: "read x402 payments", Wallets: true, Access: readAll},
	"list-x402-payments": {What: "list x402 payments", Wallets: true, Access: readAll},
	// Paying an MPP charge is a send to the seller too; its receipt is
	// the agent's report of what the seller answered.
	"mpp-pay":              {What: "pay MPP charges", Wallets: true, Access: agentsToo},
	"get-mpp-payment":      {What: "read MPP payments", Wallets: true, Access: readAll},
	"list-mpp-payments":    {What: "list MPP payments", Wallets: true, Access: readAll},
	"record-mpp-receipt":   {What: "report MPP receipts", Wallets: true, Access: agentsToo},
	"list-approvals":       {What: "list approvals", Wallets: true, Access: readAll, Note: personHidden},
	"get-approval":         {What: "read approvals", Wallets: true, Access: readAll, Note: personHidden},
	"get-approval-context": {What: "read an approval's context", Wallets: true, Access: humansRead},
	"approve": {What: "approve payments", Wallets: true, Access: approvers,
		Note: "never by the payment's requester, nor by a key descending from it (rotated by it or from it, or minted by it or by such a key); an admin key's payment never by its creators"},
	"reject":         {What: "reject payments", Wallets: true, Access: access(Allowed, Allowed, Refused)},
	"list-audit-log": {What: "read the audit log", Wallets: true, Access: readAll, Note: agentAuditView},
	"get-analytics":  {What: "read analytics", Wallets: true, Access: readAll},
	// The chain spans every wallet of the account: the humans' check.
	"verify-audit-log": {What: "verify the audit log", Access: humansRead},
	"list-keys":        {What: "list other keys", Access: access(OwnKeys, Allowed, Allowed)},
	"create-key": {What: "create admin keys", Access: agentsToo,
		Note: "only an admin key or an owner makes admin keys; a scoped key makes keys within its scope; " +
			"agent keys together have at most 20 live keys of their making per account by default (`MAX_KEYS_BY_AGENT_KEYS`; 409 past it)"},
	"rotate-key": {What: "rotate other keys", Access: access(OwnKeys, Refused, Refused)},
	"revoke-key": {What: "revoke other keys", Access: access(OwnKeys, Refused, Refused)},
	// Webhook endpoints are the humans' channels (Slack approval buttons
	// among them): an agent neither reads nor redirects them.
	"create-webhook-endpoint": {What: "manage webhook endpoints", Access: adminsOnly},
	"list-webhook-endpoints":  {What: "read webhook endpoints", Access: humansRead},
	"get-webhook-endpoint":    {What: "read webhook endpoints", Access: humansRead},
	"update-webhook-endpoint": {What: "manage webhook endpoints", Access: adminsOnly},
	"delete-webhook-endpoint": {What: "manage webhook endpoints", Access: adminsOnly},
	"rotate-webhook-secret":   {What: "manage webhook endpoints", Access: adminsOnly},
	"list-deliveries":         {What: "read webhook deliveries", Access: humansRead},
	"get-delivery":            {What: "read webhook deliveries", Access: humansRead},
	"replay-delivery":         {What: "replay webhook deliveries", Access: adminsOnly},
	"test-webhook-endpoint":   {What: "send test events", Access: adminsOnly},
	// The fee payer pays for every wallet's sends: only those who may
	// fund and loosen anything turn it on or set its budget. Its state
	// (address, balance, budget left) is readable by all, so an agent
	// can tell why a send answered fee_payer_budget_exceeded.
	"get-fee-payer":    {What: "read the fee payer", Access: readAll},
	"update-fee-payer": {What: "manage the fee payer", Access: adminsOnly},
	"fund-fee-payer":   {What: "fund the fee payer on a local chain", Access: adminsOnly},
	// The deposit minimums decide which deposits are announced: an agent
	// must not silence the events that tell humans money came in.
	"get-account-settings":    {What: "read the account's settings", Access: readAll},
	"update-account-settings": {What: "change the account's settings", Access: adminsOnly},
	// The dashboard's live events (GET /api/dashboard/v1/events, outside
	// the OpenAPI document): a person's page, never a key.
	"stream-events": {What: "stream the account's events", Wallets: true, Access: sessionsOnly,
		Note: "dashboard sessions only: a request with a key answers 401, as the other `/api/dashboard/v1` routes do; " +
			"each event goes only to whoever may list it (approvals as `list-approvals`, payments as `list-transactions`, " +
			"x402 payments as `list-x402-payments`, failed deliveries as `list-deliveries`, new users as `list-users`), within their wallet scope"},
	// A wallet's secret leaves only sealed to an owner's key, asked by one
	// owner and approved by another: no key, however trusted, may.
	"request-wallet-export": {What: "export wallet secrets", Wallets: true, Access: ownersOnly},
	"list-wallet-exports":   {What: "export wallet secrets", Wallets: true, Access: ownersOnly},
	"get-wallet-export":     {What: "export wallet secrets", Wallets: true, Access: ownersOnly},
	"approve-wallet-export": {What: "export wallet secrets", Wallets: true, Access: ownersOnly,
		Note: "never by the owner who asked for the export, nor by an owner who became one after it was asked or was added by the owner who asked"},
	"reject-wallet-export": {What: "export wallet secrets", Wallets: true, Access: ownersOnly},
	// Users are the humans: an agent that could add one could approve.
	"list-users": {What: "read the account's users", Access: humansRead},
	// Owners are the two-person rule's people: a key that could add one
	// could give one person a second owner to approve their own export.
	"create-user": {What: "manage users", Access: usersByOwners, Note: ownersByOwners},
	"update-user": {What: "manage users", Access: usersByOwners, Note: ownersByOwners},
	"delete-user": {What: "manage users", Access: usersByOwners, Note: ownersByOwners},
}

// ownersByOwners is the users rows' note.
const ownersByOwners = "no API key adds, removes, promotes or demotes an owner: only an owner signed in to the dashboard, " +
	"or the operator's `api users add`/`remove`, and only such a session links or unlinks an owner's Slack member id; every user added is announced (`user.added`); the last owner is never removed or demoted"

// CheckOwnerChange applies the owners' rule of the users rows to p's
// change of the user at address from role `from` to role `to` (from ""
// for a user being added, to "" for one being removed): a change that
// adds, removes, promotes or demotes an owner is p's only when p is an
// owner's dashboard session the table allows op. Otherwise it is a
// *Denied naming the user; any other change is nil.
func CheckOwnerChange(p Principal, op, address string, from, to Role) error {
	if from != RoleOwner && to != RoleOwner {
		return nil
	}
	if p.User != "" && Can(p, op) == Allowed {
		return nil
	}
	var what string
	switch {
	case from == "":
		what = "add an owner"
	case to == "":
		what = "remove an owner"
	case to == RoleOwner:
		what = "make a user an owner"
	default:
		what = "change an owner's role"
	}
	return &Denied{Op: op, Target: UserActorID(address),
		Reason: fmt.Sprintf("%s cannot %s: only an owner signed in to the dashboard (or the operator's api users command) may", p.Describe(), what)}
}

// CheckOwnerSlackLink applies the owners' rule to p's change of the Slack
// member linked to the user at address, whose role is role: a click by
// that member counts as that user on an approval, so linking one to an
// owner is an owner's act too. A key that could link its own Slack member
// to an owner would approve as that owner.
func CheckOwnerSlackLink(p Principal, op, address string, role Role) error {
	if role != RoleOwner || (p.User != "" && Can(p, op) == Allowed) {
		return nil
	}
	return &Denied{Op: op, Target: UserActorID(address),
		Reason: fmt.Sprintf("%s cannot change an owner's Slack member id: only an owner signed in to the dashboard may", p.Describe())}
}

// Can is what p may do with operation op (an operationId): its role's
// access, with UnscopedOnly resolved for p's scope.
func Can(p Principal, op string) Access {
	r, ok := Permissions[op]
	if !ok {
		return Refused
	}
	a, ok := r.Access[p.Role]
	if !ok {
		return Refused
	}
	if a == UnscopedOnly {
		if p.Scoped() {
			return Refused
		}
		return Allowed
	}
	return a
}

// Denied is a refusal by the permission table (or by the requester rule):
// 403, and an audit entry, so humans see an agent trying.
type Denied struct {
	Op     string // the operationId
	Reason string // the whole message, e.g. "this key's role (agent) cannot unfreeze wallets"
	// Target is what was refused, as audit entries name it (wallet:<id>,
	// approval:ap_…); "" names the key itself.
	Target string
}

func (e *Denied) Error() string { return e.Reason }

// Deny is p's refusal of op, naming what is missing.
func Deny(p Principal, op string) *Denied {
	r, ok := Permissions[op]
	switch {
	case !ok:
		return &Denied{Op: op, Reason: fmt.Sprintf("operation %s is not in the permission table", op)}
	case p.Scoped() && r.Access[p.Role] == UnscopedOnly:
		return &Denied{Op: op, Reason: fmt.Sprintf("this key is limited to some wallets and cannot %s", r.What)}
	}
	return &Denied{Op: op, Reason: fmt.Sprintf("%s cannot %s", p.Describe(), r.What)}
}

// PermissionsMarkdown prints the table for docs/permissions.md.
func PermissionsMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Who may do what

Generated from the permission table in ` + "`internal/auth/permissions.go`" + ` (a test keeps this file equal
to it: ` + "`make docs`" + ` rewrites it). Every public operation, by its OpenAPI ` + "`operationId`" + `, and what
each principal may do with it: API keys (agent, admin) and dashboard users (owner, approver, viewer;
they act as ` + "`user:<address>`" + `). ` + "`stream-events`" + ` is the dashboard's own ` + "`GET /api/dashboard/v1/events`" + `,
outside the OpenAPI document.

- **allowed**: on every wallet the principal reaches.
- **scoped**: an agent key created with ` + "`wallet_ids`" + ` reaches only those wallets: any other wallet (and
  its transactions, approvals and audit entries) answers 404, and lists leave them out.
- **tighten only**: a change that only tightens the policy (a lower limit, count or threshold, a weekly or
  monthly limit, a payment count or active hours set where there were none, active hours narrowed,
  ` + "`outside_active_hours`" + ` approve → block, an allowlist set on an unrestricted wallet, entries removed from a
  list that stays non-empty); anything that loosens it (a limit, count or threshold raised or removed, active
  hours widened, moved to another time zone or removed, ` + "`outside_active_hours`" + ` block → approve, an address
  added to a non-empty allowlist, the allowlist emptied) is refused whole, and so is setting or changing an
  entry's label (approvers read those names).
- **own keys only**: the key itself and the keys it created; reading (` + "`list-keys`" + `, and the audit entries of
  ` + "`list-audit-log`" + `) also the keys it replaced (its rotation lineage).
- **refused**: 403 ` + "`{\"error\": \"...\"}`" + ` naming what is missing, nothing changes, and an audit entry
  ` + "`permission.denied`" + ` records the attempt.

A payment's requester never approves it, whatever the role: the requester is the key (by its rotation
lineage) or the person (` + "`user:<address>`" + `) that made the send, and no principal descending from it may
approve: the requesting key and every key rotated from it, every key the requester minted (through the
API or, for a person, in the dashboard), every key those minted in turn, and every key the requester
rotated (whoever rotates a key is handed it). An admin key's payment is also its creators' own: the
key or person that made it, and their other keys, may not approve it. A person may approve the
payments of an agent key they made (agent keys cannot approve; that delegation is what they are
for). Removing a person revokes the keys that descend from them.

| operation | agent key | scoped agent key | admin key | owner | approver | viewer | also |
| --- | --- | --- | --- | --- | --- | --- | --- |
`)
	for _, op := range slices.Sorted(maps.Keys(Permissions)) {
		r := Permissions[op]
		agent := Principal{Role: RoleAgent}
		scoped := Principal{Role: RoleAgent, Wallets: scopeMarker}
		fmt.Fprintf(&b, "| `%s` | %s | %s |", op, cell(r, agent), cell(r, scoped))
		for _, role := range []Role{RoleAdmin, RoleOwner, RoleApprover, RoleViewer} {
			fmt.Fprintf(&b, " %s |", cell(r, Principal{Role: role}))
		}
		fmt.Fprintf(&b, " %s |\n", r.Note)
	}
	return b.String()
}

// scopeMarker makes a principal scoped, for printing the table.
var scopeMarker = WalletScope{uuid.Nil}

func cell(r Rule, p Principal) string {
	a := r.Access[p.Role]
	if a == "" {
		a = Refused
	}
	if a == UnscopedOnly {
		if p.Scoped() {
			return string(Refused)
		}
		a = Allowed
	}
	if a != Refused && r.Wallets && p.Scoped() {
		if a == Allowed {
			return "scoped"
		}
		return string(a) + ", scoped"
	}
	return string(a)
}

package httpapi_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/httpapi"
	"github.com/agentwallet/agentwallet/internal/waitfor"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// matrixFixtures are the ids one account owns, by the path segment that
// names them.
type matrixFixtures map[string]string

// fixtures makes one of everything a route can name for the account of
// key: an agent (funded, parking anything above 1 USDC), a pending
// approval, a webhook endpoint with one delivered test event, and a key.
func (e *env) fixtures(key, hookURL string) matrixFixtures {
	e.t.Helper()
	o := *e
	o.key = key
	agent, _ := o.agent(map[string]any{"approval_threshold_usdc": 1}, 10_000_000)
	approval := o.park(agent, newAddress(), 2)
	x402Payment := o.parkX402(key, agent)
	mppPayment, _ := o.signMPP(key, agent)
	ep, _ := o.createEndpoint(hookURL, "tx.sent")
	var delivery string
	waitfor.True(e.t, "the endpoint's test delivery", func() bool {
		ds := o.deliveries(key, ep, "")
		if len(ds) == 1 && ds[0]["status"] == "succeeded" {
			delivery = ds[0]["id"].(string)
		}
		return delivery != ""
	})
	keyID, _ := o.agentKey()
	acct, err := auth.Authenticate(e.t.Context(), e.db, key)
	if err != nil {
		e.t.Fatal(err)
	}
	user := newAddress()
	if _, err := auth.AddUser(e.t.Context(), e.db, acct.AccountID, user, auth.RoleViewer, "operator"); err != nil {
		e.t.Fatal(err)
	}
	return matrixFixtures{
		"agents": agent, "wallets": agent, "approvals": approval,
		"webhook-endpoints": ep, "deliveries": delivery, "keys": keyID, "users": user, "payments": x402Payment,
		"mpp/payments": mppPayment, "exports": e.requestExport(acct.AccountID, agent),
	}
}

// requestExport records an export of wallet w's secret, asked by a new
// owner of the account, and returns its id.
func (e *env) requestExport(accountID uuid.UUID, w string) string {
	e.t.Helper()
	address := newAddress()
	if _, err := auth.AddUser(e.t.Context(), e.db, accountID, address, auth.RoleOwner, "operator"); err != nil {
		e.t.Fatal(err)
	}
	owner := "user:" + address
	recipient, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	x, err := wallet.RequestExport(e.t.Context(), e.db, accountID, uuid.MustParse(w), audit.Actor(owner), recipient.PublicKey().Bytes())
	if err != nil {
		e.t.Fatal(err)
	}
	return x.ID.String()
}

// fill puts the fixture ids into a path's {id} (or {address}, or
// {export_id}).
func (f matrixFixtures) fill(t testing.TB, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s == "{id}" || s == "{address}" || s == "{export_id}" {
			id, ok := f[segs[i-2]+"/"+segs[i-1]]
			if !ok {
				id, ok = f[segs[i-1]]
			}
			if !ok {
				t.Fatalf("%s: no fixture for a %s id; add one to fixtures()", path, segs[i-1])
			}
			segs[i] = id
		}
	}
	return strings.Join(segs, "/")
}

type matrixCase struct {
	name   string
	method string
	path   string
	key    string
	body   any
	header http.Header
	status int
	want   string // in the error message; "" for any
}

// TestErrorMatrix runs every public operation (read from the OpenAPI
// document, so a new one joins by itself) through every way a request can
// be wrong: no key, a malformed key, a revoked key, another account's id,
// a malformed id, malformed JSON, wrong types, missing required fields,
// unknown fields, a body over 64 KiB and a wrong method. Each answers its
// 4xx with an {"error"} body, none a 5xx, and no row changes.
func TestErrorMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	hook := newReceiver(t, nil)
	_, otherKey := e.newAccount("devnet")
	mine := e.fixtures(e.key, hook.URL)
	theirs := e.fixtures(otherKey, hook.URL)
	revokedID, revoked := e.agentKey()
	if status, body := e.do("DELETE", "/api/public/v1/keys/"+revokedID, e.key, nil); status != 200 {
		t.Fatalf("revoke: %d %v", status, body)
	}

	doc := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI()
	samples := matrixSamples(hook.URL)
	// Operations no key may use (owners' only) are tried as an owner.
	owner, _ := e.session(auth.RoleOwner)
	// Required by the handler rather than the schema.
	alsoRequired := map[string][]string{"create-webhook-endpoint": {"url", "events"}}
	big := `{"label":"` + strings.Repeat("a", 64<<10) + `"}`

	var cases []matrixCase
	ops := 0
	for path, item := range doc.Paths {
		registered := map[string]bool{}
		for method, op := range operations(item) {
			registered[method] = true
			ops++
			own, foreign := mine.fill(t, path), theirs.fill(t, path)
			sample, hasSample := samples[op.OperationID]
			if op.RequestBody != nil && !hasSample {
				t.Fatalf("%s takes a body: add a valid sample to the matrix", op.OperationID)
			}
			ownersOnly := auth.Can(auth.Principal{Role: auth.RoleAdmin}, op.OperationID) == auth.Refused
			c := func(name string, key string, body any, status int, want string) matrixCase {
				mc := matrixCase{name: op.OperationID + "/" + name, method: method, path: own, key: key, body: body, status: status, want: want}
				if ownersOnly && key == e.key {
					mc.key, mc.header = "", owner
				}
				return mc
			}
			cases = append(cases,
				c("no key", "", sample, 401, "Unauthorized"),
				c("malformed key", "svc_test_short", sample, 401, "Unauthorized"),
				c("revoked key", revoked, sample, 401, "Unauthorized"),
				c("malformed JSON", e.key, `{"label":`, 400, "malformed JSON"),
				c("body over 64 KiB", e.key, big, 413, "larger than 64 KiB"),
			)
			if own != path {
				f := c("another account's id", e.key, sample, 404, "not found")
				f.path = foreign
				m := c("malformed id", e.key, sample, 404, "not found")
				m.path = strings.NewReplacer("{id}", "nope", "{address}", "nope", "{export_id}", "nope").Replace(path)
				cases = append(cases, f, m)
			}
			if op.RequestBody == nil {
				cases = append(cases,
					c("unknown field", e.key, `{"bogus":1}`, 422, "bogus: unexpected property"),
					c("not an object", e.key, `[1]`, 422, "takes no body"))
				for _, p := range op.Parameters {
					if bad, status, ok := wrongParam(p); ok {
						w := c("wrong type in "+p.Name, e.key, nil, status, p.Name)
						w.path += "?" + p.Name + "=" + bad
						cases = append(cases, w)
					}
				}
				continue
			}
			body := sample.(map[string]any)
			schema := doc.Components.Schemas.SchemaFromRef(op.RequestBody.Content["application/json"].Schema.Ref)
			cases = append(cases, c("unknown field", e.key, with(body, "bogus", 1), 422, "bogus: unexpected property"))
			for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
				prop := schema.Properties[name]
				if prop.Ref != "" {
					prop = doc.Components.Schemas.SchemaFromRef(prop.Ref)
				}
				cases = append(cases, c("wrong type for "+name, e.key, with(body, name, wrongValue(t, prop)), 422, name))
			}
			for _, name := range append(slices.Clone(schema.Required), alsoRequired[op.OperationID]...) {
				cases = append(cases, c("missing "+name, e.key, without(body, name), 422, name))
			}
			if op.OperationID == "send" || op.OperationID == "x402-pay" || op.OperationID == "mpp-pay" {
				h := c("malformed Idempotency-Key", e.key, body, 422, "Idempotency-Key")
				h.header = http.Header{"Idempotency-Key": {"naïve key"}}
				cases = append(cases, h)
			}
		}
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if !registered[m] {
				cases = append(cases, matrixCase{name: path + "/wrong method " + m, method: m, path: mine.fill(t, path),
					key: e.key, status: 405, want: "method not allowed"})
			}
		}
	}
	if ops < 29 {
		t.Fatalf("the document lists %d operations; the matrix expects at least 29", ops)
	}
	// The Slack route is not in the document: its key is a signature.
	cases = append(cases,
		matrixCase{name: "slack/unsigned", method: "POST", path: httpapi.SlackInteractionsPath, body: "payload=%7B%7D", status: 401, want: "Unauthorized"},
		matrixCase{name: "slack/body over 64 KiB", method: "POST", path: httpapi.SlackInteractionsPath, body: big, status: 413, want: "larger than 64 KiB"},
		matrixCase{name: "slack/wrong method", method: "GET", path: httpapi.SlackInteractionsPath, status: 405, want: "method not allowed"},
	)

	before := e.stableSnapshot()
	for _, tc := range cases {
		status, raw, hdr := e.request(tc.method, tc.path, tc.key, tc.body, tc.header)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		msg, _ := body["error"].(string)
		switch {
		case status >= 500:
			t.Errorf("%s: %s %s → %d %s", tc.name, tc.method, tc.path, status, raw)
		case status != tc.status:
			t.Errorf("%s: %s %s → %d, want %d (%s)", tc.name, tc.method, tc.path, status, tc.status, raw)
		case msg == "" || !strings.Contains(msg, tc.want):
			t.Errorf("%s: body %s, want an error naming %q", tc.name, raw, tc.want)
		case status == 405 && hdr.Get("Allow") == "":
			t.Errorf("%s: 405 without Allow", tc.name)
		}
		for k := range body {
			if k != "error" && k != "details" {
				t.Errorf("%s: unexpected field %q in %s", tc.name, k, raw)
			}
		}
	}
	if after := e.stableSnapshot(); !maps.Equal(before, after) {
		t.Fatalf("bad requests changed rows:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d operations, %d cases", ops, len(cases))
}

// matrixSamples is a valid body for each operation that takes one.
func matrixSamples(hookURL string) map[string]any {
	return map[string]any{
		"create-agent":            map[string]any{"label": "m"},
		"update-policy":           map[string]any{"max_tx_usdc": 10},
		"send":                    map[string]any{"to": newAddress(), "amount": 1},
		"preview-send":            map[string]any{"to": newAddress(), "amount": 1},
		"x402-pay":                map[string]any{"payment_required": fakeChallenge("1000")},
		"mpp-pay":                 map[string]any{"challenge": fakeCharge("1000"), "resource": "https://seller.test/r"},
		"record-mpp-receipt":      map[string]any{"receipt": fakeReceipt("not-a-payment's")},
		"fund-wallet":             map[string]any{"usdc": 1, "sol": 0.01},
		"update-fee-payer":        map[string]any{"enabled": false, "daily_budget_sol": 1},
		"fund-fee-payer":          map[string]any{"sol": 0.01},
		"update-account-settings": map[string]any{"deposit_min_usdc": 0.01},
		"approve":                 map[string]any{"note": "n"},
		"reject":                  map[string]any{"note": "n"},
		"create-webhook-endpoint": map[string]any{"url": hookURL, "events": []string{"tx.sent"}},
		"update-webhook-endpoint": map[string]any{"description": "d"},
		"create-key":              map[string]any{"label": "m"},
		"create-user":             map[string]any{"address": newAddress(), "role": "viewer"},
		"update-user":             map[string]any{"role": "viewer"},
		"request-wallet-export":   map[string]any{"recipient_public_key": "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="},
	}
}

func operations(item *huma.PathItem) map[string]*huma.Operation {
	out := map[string]*huma.Operation{}
	for m, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
		if op != nil {
			out[m] = op
		}
	}
	return out
}

// wrongValue is a JSON value of another type than s says.
func wrongValue(t testing.TB, s *huma.Schema) any {
	switch s.Type {
	case huma.TypeString:
		return 12345
	case huma.TypeNumber, huma.TypeInteger:
		return "12"
	case huma.TypeBoolean:
		return "yes"
	case huma.TypeArray:
		return "not a list"
	case huma.TypeObject:
		return []int{1}
	}
	t.Fatalf("no wrong value for a schema of type %q", s.Type)
	return nil
}

// wrongParam is a value a query parameter refuses and the status it
// answers, when it has a type to get wrong. A cursor the API did not make
// is 400 (docs/decisions/operations.md, "Cursors"), every other bad
// parameter 422.
func wrongParam(p *huma.Param) (string, int, bool) {
	switch {
	case p.In != "query":
		return "", 0, false
	case p.Name == "cursor":
		return "%00", 400, true
	case p.Schema.Type == huma.TypeInteger:
		return "ten", 422, true
	case len(p.Schema.Enum) > 0:
		return "bogus", 422, true
	case p.Schema.Format == "date-time":
		return "yesterday", 422, true
	case p.Name == "wallet_id" || p.Name == "target":
		return "%00", 422, true
	}
	return "", 0, false
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for k2, v2 := range m {
		if k2 != k {
			out[k2] = v2
		}
	}
	return out
}

func without(m map[string]any, k string) map[string]any {
	out := map[string]any{}
	for k2, v2 := range m {
		if k2 != k {
			out[k2] = v2
		}
	}
	return out
}

// stableSnapshot is snapshot once background work (deliveries, the
// dispatcher) has settled: two readings 300 ms apart agree. api_keys is
// left out (last_used_at moves with every minute of use); its count and
// revocations are kept. audit_log leaves out permission.denied entries: a
// refusal writes one, and nothing else.
func (e *env) stableSnapshot() map[string]string {
	e.t.Helper()
	var last map[string]string
	for range 50 {
		s := e.snapshot()
		var n, revoked int
		if err := e.db.NewRaw("SELECT count(*), count(revoked_at) FROM api_keys").Scan(e.t.Context(), &n, &revoked); err != nil {
			e.t.Fatal(err)
		}
		s["api_keys"] = fmt.Sprintf("%d keys, %d revoked", n, revoked)
		var digest string
		if err := e.db.NewRaw("SELECT count(*), coalesce(md5(string_agg(id::text, ',' ORDER BY id)), '') FROM audit_log WHERE action <> ?",
			audit.ActionPermissionDenied).Scan(e.t.Context(), &n, &digest); err != nil {
			e.t.Fatal(err)
		}
		s["audit_log"] = fmt.Sprintf("%d entries %s", n, digest)
		if last != nil && maps.Equal(last, s) {
			return s
		}
		last = s
		time.Sleep(300 * time.Millisecond)
	}
	e.t.Fatal("the database never settled")
	return nil
}

// matrixPrincipal is who a permission-matrix case acts as, and on which
// wallet's fixtures.
type matrixPrincipal struct {
	name    string
	key     string
	hdr     http.Header    // a dashboard session's cookie, CSRF token and origin
	as      auth.Principal // its role and scope, for the permission table
	wallet  string         // the wallet its wallet routes name
	foreign bool           // another account's key: every id is not found
	outside bool           // the wallet is outside the key's scope
}

// TestPermissionMatrix runs every public operation (read from the OpenAPI
// document) as an agent key, a scoped agent key (on a wallet inside its
// scope and on one outside), an admin key and another account's admin
// key, and checks the status auth.Permissions gives it: 403 when refused
// (a tighten-only PATCH that loosens, an own-keys action on another key, a
// scoped key creating wallets), 404 for an id the principal does not
// reach, a 2xx otherwise. Refused calls change no row but their
// permission.denied audit entry. An operation missing from the table fails.
// The dashboard's own operations (httpapi.DashboardOperations) run too:
// 401 for every key, the table's answer for each dashboard role.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	hook := newReceiver(t, nil)
	doc := httpapi.NewAPI(http.NewServeMux(), httpapi.Deps{}).OpenAPI()
	ops := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range operations(item) {
			ops[op.OperationID] = true
			if _, ok := auth.Permissions[op.OperationID]; !ok {
				t.Errorf("operation %s has no row in auth.Permissions", op.OperationID)
			}
		}
	}
	for _, op := range httpapi.DashboardOperations {
		ops[op.ID] = true
		if _, ok := auth.Permissions[op.ID]; !ok {
			t.Errorf("dashboard operation %s has no row in auth.Permissions", op.ID)
		}
	}
	for op := range auth.Permissions {
		if !ops[op] {
			t.Errorf("auth.Permissions names %s, which the API does not have", op)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	policy := map[string]any{"approval_threshold_usdc": 1}
	in, _ := e.agent(policy, 10_000_000)
	out, _ := e.agent(policy, 10_000_000)
	_, agentKey := e.agentKey()
	scoped := e.newKey(e.key, map[string]any{"wallet_ids": []string{in}})["key"].(string)
	adminID := "key_" + keyIDOf(t, e, e.key)
	_, otherKey := e.newAccount("devnet")
	inUUID, _ := uuid.Parse(in)
	principals := []matrixPrincipal{
		{name: "agent", key: agentKey, as: auth.Principal{Role: auth.RoleAgent}, wallet: in},
		{name: "scoped agent on its wallet", key: scoped, as: auth.Principal{Role: auth.RoleAgent, Wallets: auth.WalletScope{inUUID}}, wallet: in},
		{name: "scoped agent on another wallet", key: scoped, as: auth.Principal{Role: auth.RoleAgent, Wallets: auth.WalletScope{inUUID}}, wallet: out, outside: true},
		{name: "admin", key: e.key, as: auth.Principal{Role: auth.RoleAdmin}, wallet: in},
		{name: "another account's admin", key: otherKey, as: auth.Principal{Role: auth.RoleAdmin}, wallet: in, foreign: true},
	}
	for _, role := range auth.UserRoles {
		hdr, address := e.session(role)
		principals = append(principals, matrixPrincipal{name: string(role), hdr: hdr, as: auth.Principal{Role: role, User: address}, wallet: in})
	}
	// Shared fixtures; actions that consume their target get a fresh one.
	// Approvals are parked by the agent key, so the admin is not their
	// requester.
	park := func(w string) string {
		status, body := e.do("POST", fmt.Sprintf(sendPath, w), agentKey, map[string]any{"to": newAddress(), "amount": 2})
		if status != http.StatusAccepted {
			t.Fatalf("park: %d %v", status, body)
		}
		return body["approval_id"].(string)
	}
	approvals := map[string]string{in: park(in), out: park(out)}
	x402Payments := map[string]string{in: e.parkX402(agentKey, in), out: e.parkX402(agentKey, out)}
	// Signed MPP payments, and a receipt of each one's challenge.
	mppPayments, receipts := map[string]string{}, map[string]any{}
	for _, w := range []string{in, out} {
		id, challenge := e.signMPP(agentKey, w)
		mppPayments[w], receipts[w] = id, map[string]any{"receipt": fakeReceipt(challenge)}
	}
	// Exports asked by another owner than the matrix's, who may decide them.
	exports := map[string]string{in: e.requestExport(e.account.ID, in), out: e.requestExport(e.account.ID, out)}
	endpoint, _ := e.createEndpoint(hook.URL, "tx.sent")
	viewer := newAddress()
	e.addUser(viewer, auth.RoleViewer)
	// The owners' rule of the users rows (auth.NotOwners): what no key
	// may do to an owner, tried on the viewer and on an owner.
	ownerUser := newAddress()
	e.addUser(ownerUser, auth.RoleOwner)
	type ownerChange struct {
		name    string
		address string // the user changed; "" for a new one
		body    any
	}
	ownerChanges := map[string][]ownerChange{
		"create-user": {{"an owner", "", map[string]any{"address": newAddress(), "role": "owner"}}},
		"update-user": {{"to owner", viewer, map[string]any{"role": "owner"}}, {"an owner's role", ownerUser, map[string]any{"role": "viewer"}}},
		"delete-user": {{"an owner", ownerUser, nil}},
	}
	var delivery string
	waitfor.True(t, "the endpoint's test delivery", func() bool {
		if ds := e.deliveries(e.key, endpoint, ""); len(ds) == 1 && ds[0]["status"] == "succeeded" {
			delivery = ds[0]["id"].(string)
		}
		return delivery != ""
	})
	// The fee payer's wallet exists (fund-fee-payer funds it) but is off:
	// the matrix's sends are the wallets' own.
	for _, key := range []string{e.key, otherKey} {
		for _, on := range []bool{true, false} {
			if status, body := e.do("PUT", "/api/public/v1/fee-payer", key, map[string]any{"enabled": on}); status != http.StatusOK {
				t.Fatalf("fee payer enabled=%v: %d %v", on, status, body)
			}
		}
	}
	samples := matrixSamples(hook.URL)
	samples["update-policy"] = map[string]any{"max_tx_usdc": 20}           // tightens
	loosen := map[string]any{"max_tx_usdc": 1000}                          // loosens
	adminKey := map[string]any{"role": "admin", "label": "not for agents"} // for create-key

	type matrixRun struct {
		matrixCase
		fresh func() string // makes the path's id when the case runs
		after func()        // undoes what would change later cases
		// elsewhere: a refusal audited in another account's log.
		elsewhere bool
	}
	var refused, allowed []matrixRun
	for path, item := range doc.Paths {
		for method, op := range operations(item) {
			rule := auth.Permissions[op.OperationID]
			seg := ""
			if i := strings.Index(path, "/{"); i >= 0 {
				seg = path[strings.LastIndex(path[:i], "/")+1 : i]
			}
			for _, p := range principals {
				access := auth.Can(p.as, op.OperationID)
				c := matrixRun{matrixCase: matrixCase{name: op.OperationID + " as " + p.name, method: method, key: p.key, header: p.hdr, body: samples[op.OperationID]},
					elsewhere: p.foreign}
				payments := x402Payments
				if strings.HasPrefix(path, httpapi.Prefix+"/mpp/") {
					payments = mppPayments
				}
				switch op.OperationID {
				case "record-mpp-receipt":
					c.body = receipts[p.wallet]
				case "mpp-pay": // a challenge is paid once
					c.body = map[string]any{"challenge": fakeCharge("1000"), "resource": "https://seller.test/r"}
				}
				id := map[string]string{"agents": p.wallet, "wallets": p.wallet, "approvals": approvals[p.wallet],
					"webhook-endpoints": endpoint, "deliveries": delivery, "keys": adminID, "users": viewer, "payments": payments[p.wallet]}[seg]
				if seg != "" && id == "" {
					t.Fatalf("%s: no fixture for a %s id", path, seg)
				}
				c.path = strings.NewReplacer("{id}", id, "{address}", id, "{export_id}", exports[p.wallet]).Replace(path)
				switch {
				case access == auth.Refused:
					c.status = http.StatusForbidden
				case seg != "" && (p.foreign || p.outside && rule.Wallets):
					c.status = http.StatusNotFound
				default:
					c.status = http.StatusOK // any 2xx
				}
				if c.status != http.StatusOK {
					refused = append(refused, c)
					continue
				}
				// The variants the table refuses within an allowed operation.
				switch {
				case access == auth.TightenOnly:
					r := c
					r.name, r.body, r.status = c.name+" (loosening)", loosen, http.StatusForbidden
					refused = append(refused, r)
				case access == auth.OwnKeys && seg == "keys":
					r := c
					r.name, r.status = c.name+" (the admin's key)", http.StatusForbidden
					refused = append(refused, r)
				case op.OperationID == "create-key" && p.as.Role != auth.RoleAdmin && p.as.Role != auth.RoleOwner:
					r := c
					r.name, r.body, r.status = c.name+" (an admin key)", adminKey, http.StatusForbidden
					refused = append(refused, r)
				case access == auth.NotOwners:
					for _, v := range ownerChanges[op.OperationID] {
						r := c
						r.name, r.body, r.status = c.name+" ("+v.name+")", v.body, http.StatusForbidden
						if v.address != "" {
							r.path = strings.Replace(path, "{address}", v.address, 1)
						}
						refused = append(refused, r)
					}
				case access == auth.Allowed && rule.Access[auth.RoleAdmin] == auth.NotOwners:
					// What the keys may not, an owner's session may.
					for _, v := range ownerChanges[op.OperationID] {
						a := c
						a.name, a.body = c.name+" ("+v.name+")", v.body
						if v.address != "" {
							role := auth.RoleOwner
							if v.address == viewer {
								role = auth.RoleViewer
							}
							a.path = path
							a.fresh = func() string {
								u := newAddress()
								e.addUser(u, role)
								return u
							}
						}
						allowed = append(allowed, a)
					}
				}
				key, w := p.key, p.wallet
				if key == "" {
					key = e.key // a user manages any key: the admin makes them
				}
				switch {
				case seg == "approvals" && method == "POST":
					c.fresh = func() string { return park(w) }
				case seg == "keys":
					// A key the principal may manage: one it made.
					c.fresh = func() string { return e.newKey(key, nil)["id"].(string) }
				case seg == "users":
					c.fresh = func() string {
						u := newAddress()
						e.addUser(u, auth.RoleViewer)
						return u
					}
				case op.OperationID == "create-user":
					c.body = map[string]any{"address": newAddress(), "role": "viewer"}
				case op.OperationID == "delete-webhook-endpoint":
					c.fresh = func() string { id, _ := e.createEndpoint(hook.URL, "tx.sent"); return id }
				case strings.Contains(path, "{export_id}") && method == "POST":
					// An approve or reject decides the export: a new one each.
					c.fresh = func() string { return e.requestExport(e.account.ID, w) }
					c.path = strings.Replace(path, "{id}", w, 1)
				case op.OperationID == "freeze-agent":
					// A frozen wallet would block the sends of later cases.
					c.after = func() {
						if status, body := e.do("POST", agentsPath+"/"+w+"/unfreeze", e.key, nil); status != 200 {
							t.Fatalf("unfreeze: %d %v", status, body)
						}
					}
				}
				if c.fresh != nil && !strings.Contains(path, "{export_id}") {
					c.path = path
				}
				allowed = append(allowed, c)
			}
		}
	}

	// The requester rule, for people and minted keys: an approve whose
	// approver descends from the payment's requester is refused (the
	// requester itself, a key it minted, a key that key minted), and a
	// person may approve the payments of an agent key they made.
	owner := principals[len(principals)-len(auth.UserRoles)].hdr
	mint := func(key string, hdr http.Header, body any) string {
		status, raw, _ := e.request("POST", keysPath, key, body, hdr)
		var k map[string]any
		_ = json.Unmarshal(raw, &k)
		if status != http.StatusCreated {
			t.Fatalf("mint: %d %s", status, raw)
		}
		return k["key"].(string)
	}
	parkAs := func(key string, hdr http.Header) string {
		status, raw, _ := e.request("POST", fmt.Sprintf(sendPath, in), key, map[string]any{"to": newAddress(), "amount": 2}, hdr)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		if status != http.StatusAccepted {
			t.Fatalf("park: %d %s", status, raw)
		}
		return body["approval_id"].(string)
	}
	adminBody := map[string]any{"role": "admin"}
	_, requester := e.adminKey()
	minted := mint(requester, nil, adminBody)
	grandchild := mint(minted, nil, adminBody)
	byRequester, byOwner := parkAs(requester, nil), parkAs("", owner)
	ownersKey := mint("", owner, adminBody)
	ownersAgent := mint("", owner, nil)
	approvePath := approvalsPath + "/%s/approve"
	for _, r := range []struct {
		name, key string
		hdr       http.Header
		ap        string
	}{
		{"the requesting admin key", requester, nil, byRequester},
		{"an admin key the requester minted", minted, nil, byRequester},
		{"an admin key minted by a key the requester minted", grandchild, nil, byRequester},
		{"the requesting owner", "", owner, byOwner},
		{"an admin key the requesting owner minted", ownersKey, nil, byOwner},
	} {
		refused = append(refused, matrixRun{matrixCase: matrixCase{name: "approve as " + r.name + " (requester rule)", method: "POST",
			path: fmt.Sprintf(approvePath, r.ap), key: r.key, header: r.hdr, status: http.StatusForbidden, want: "Requester cannot approve"}})
	}
	allowed = append(allowed, matrixRun{matrixCase: matrixCase{name: "approve as an owner, its agent key's payment (requester rule)", method: "POST",
		path: approvalsPath + "/{id}/approve", header: owner, status: http.StatusOK}, fresh: func() string { return parkAs(ownersAgent, nil) }})

	check := func(c matrixRun) {
		t.Helper()
		if c.fresh != nil {
			id := c.fresh()
			c.path = strings.NewReplacer("{id}", id, "{address}", id, "{export_id}", id).Replace(c.path)
		}
		status, raw, _ := e.request(c.method, c.path, c.key, c.body, c.header)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		switch {
		case c.status == http.StatusOK && status/100 != 2:
			t.Errorf("%s: %s %s → %d, want a 2xx (%s)", c.name, c.method, c.path, status, raw)
		case c.status != http.StatusOK && status != c.status:
			t.Errorf("%s: %s %s → %d, want %d (%s)", c.name, c.method, c.path, status, c.status, raw)
		case c.status != http.StatusOK && body["error"] == nil:
			t.Errorf("%s: %d without an error body: %s", c.name, status, raw)
		case c.want != "" && !strings.Contains(fmt.Sprint(body["error"]), c.want):
			t.Errorf("%s: error %v, want %q", c.name, body["error"], c.want)
		}
	}
	before := e.stableSnapshot()
	deniedBefore := len(e.auditOf(audit.ActionPermissionDenied))
	forbidden := 0
	for _, c := range refused {
		check(c)
		if c.status == http.StatusForbidden && !c.elsewhere {
			forbidden++
		}
	}
	if after := e.stableSnapshot(); !maps.Equal(before, after) {
		t.Fatalf("refused requests changed rows:\nbefore %v\nafter  %v", before, after)
	}
	if n := len(e.auditOf(audit.ActionPermissionDenied)) - deniedBefore; n != forbidden {
		t.Fatalf("%d permission.denied entries for %d refusals", n, forbidden)
	}
	for _, c := range allowed {
		check(c)
		if c.after != nil {
			c.after()
		}
	}

	// The dashboard's own operations, outside the document: a key is not
	// a session, so every key (whatever its role, or account) gets the
	// 401 the dashboard routes give; each role what the table says. A
	// stream that is served starts with its headers.
	for _, op := range httpapi.DashboardOperations {
		for _, p := range principals {
			want := http.StatusOK
			switch {
			case p.key != "":
				want = http.StatusUnauthorized
			case auth.Can(p.as, op.ID) == auth.Refused:
				want = http.StatusForbidden
			}
			ctx, cancel := context.WithCancel(t.Context())
			req, _ := http.NewRequestWithContext(ctx, op.Method, e.url+op.Path, nil)
			for k, v := range p.hdr {
				req.Header[k] = v
			}
			if p.key != "" {
				req.Header.Set("Authorization", "Bearer "+p.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			ct := resp.Header.Get("Content-Type")
			var body map[string]any
			if want != http.StatusOK {
				_ = json.NewDecoder(resp.Body).Decode(&body)
			}
			cancel()
			resp.Body.Close()
			switch {
			case resp.StatusCode != want:
				t.Errorf("%s as %s: %d, want %d", op.ID, p.name, resp.StatusCode, want)
			case want == http.StatusOK && ct != "text/event-stream":
				t.Errorf("%s as %s: content type %q", op.ID, p.name, ct)
			case want != http.StatusOK && body["error"] == nil:
				t.Errorf("%s as %s: %d without an error body", op.ID, p.name, resp.StatusCode)
			}
		}
	}

	// Reads of people and keys: list-audit-log gives agent keys, scoped or
	// not, no entry about a person, a session, a webhook endpoint or
	// another key, and no person's address; admin keys and every dashboard
	// role read them.
	person := newAddress()
	if status, body := e.do("POST", usersPath, e.key, map[string]any{"address": person, "role": "viewer"}); status != http.StatusCreated {
		t.Fatalf("add user: %d %v", status, body)
	}
	for _, p := range principals {
		if p.foreign || p.outside {
			continue
		}
		// An agent key's own keys are the ones GET /keys lists to it.
		own := map[string]bool{}
		if p.as.Role == auth.RoleAgent {
			ids, _ := e.readPages(keysPath, "keys", p.key)
			for _, id := range ids {
				own["key:"+id] = true
			}
		}
		entries, raw := e.readAudit(auditReader{key: p.key, hdr: p.hdr}, "")
		var people, keys int
		for _, en := range entries {
			action, target := en["action"].(string), en["target"].(string)
			switch {
			case strings.HasPrefix(action, "user.") || strings.HasPrefix(action, "session.") || strings.HasPrefix(target, "webhook_endpoint:"):
				people++
			case strings.HasPrefix(target, "key:") && !own[target]:
				keys++
			}
		}
		if p.as.Role == auth.RoleAgent {
			if people+keys != 0 || strings.Contains(raw, person) {
				t.Errorf("list-audit-log as %s: %d entries about people or endpoints, %d about other keys", p.name, people, keys)
			}
			for _, q := range []string{"action=user.added", "action=key.created&target=" + adminID} {
				if es, _ := e.readAudit(auditReader{key: p.key}, q); len(es) != 0 {
					t.Errorf("list-audit-log?%s as %s: %d entries", q, p.name, len(es))
				}
			}
			continue
		}
		if people == 0 || keys == 0 || !strings.Contains(raw, person) {
			t.Errorf("list-audit-log as %s: %d entries about people or endpoints, %d about other keys, want some of each", p.name, people, keys)
		}
	}
	t.Logf("%d operations, %d refused and %d allowed cases", len(ops), len(refused), len(allowed))
}

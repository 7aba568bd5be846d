package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/policy"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// pageBudget is the documented bound of one page's body
// (docs/decisions/operations.md, "Bounded lists and caps"): 1 MiB.
const pageBudget = 1 << 20

// insertWallets writes n wallets of the env's account straight into the
// database (no keypair: lists never read it), one microsecond apart, each
// with policy p; it returns their ids.
func (e *env) insertWallets(n int, p policy.Policy) []string {
	e.t.Helper()
	ws := make([]wallet.Wallet, n)
	ids := make([]string, n)
	at := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Hour)
	for i := range ws {
		ws[i] = wallet.Wallet{
			ID: uuid.New(), AccountID: e.account.ID, Kind: wallet.KindAgent, Label: fmt.Sprint("bulk ", i),
			Pubkey: newAddress(), State: wallet.Active,
			DailyLimit: p.DailyLimit, MaxTx: p.MaxTx, ApprovalThreshold: p.ApprovalThreshold,
			Allowlist: p.Allowlist, AllowlistLabels: p.Labels, Assets: p.SpendableAssets(),
			SecretKeyID: "unused", SecretSealed: []byte{0}, CreatedAt: at.Add(time.Duration(i) * time.Microsecond),
		}
		if ws[i].Allowlist == nil {
			ws[i].Allowlist = []string{}
		}
		if ws[i].AllowlistLabels == nil {
			ws[i].AllowlistLabels = map[string]string{}
		}
		ids[i] = ws[i].ID.String()
	}
	if _, err := e.db.NewInsert().Model(&ws).Exec(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// fullAddressBook is the largest policy an approver may have to read: 1,000
// allowlist entries, each labelled with 100 two-byte characters.
func fullAddressBook() policy.Policy {
	p := policy.Default()
	p.Labels = map[string]string{}
	for i := range 1000 {
		a := newAddress()
		p.Allowlist = append(p.Allowlist, a)
		p.Labels[a] = strings.Repeat("é", 99) + string(rune('a'+i%26))
	}
	return p
}

// readPages follows a list from path (which may carry a query) with key:
// every page must stay within pageBudget and answer 200. It returns the
// ids of every item, in order, and the number of pages.
func (e *env) readPages(path, field, key string) (ids []string, pages int) {
	e.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for {
		p := path
		if cursor != "" {
			p += sep + "cursor=" + url.QueryEscape(cursor)
		}
		status, raw, _ := e.request("GET", p, key, nil, nil)
		if status != http.StatusOK {
			e.t.Fatalf("GET %s: %d %.300s", p, status, raw)
		}
		if len(raw) > pageBudget {
			e.t.Fatalf("GET %s: %d bytes, past the %d-byte page budget", p, len(raw), pageBudget)
		}
		pages++
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			e.t.Fatal(err)
		}
		items := body[field].([]any)
		if len(items) == 0 && body["next_cursor"] != nil {
			e.t.Fatalf("GET %s: an empty page with a cursor", p)
		}
		for _, it := range items {
			m := it.(map[string]any)
			ids = append(ids, m["id"].(string))
		}
		next, ok := body["next_cursor"].(string)
		if !ok {
			return ids, pages
		}
		cursor = next
	}
}

// exactlyOnce fails unless got holds every id of want once, and nothing else.
func exactlyOnce(t testing.TB, what string, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Fatalf("%s: %s listed %d times", what, id, seen[id])
		}
		delete(seen, id)
	}
	if len(seen) > 0 {
		t.Fatalf("%s: listed %d unexpected items", what, len(seen))
	}
}

// A bare GET /agents (the spec's form) and GET /wallets answer the first
// page of 100 with a cursor, never every wallet; following the cursors
// lists each wallet once, for an unscoped agent key too.
func TestLists_BareAgentListIsABoundedPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.insertWallets(230, policy.Default())
	_, agentKey := e.agentKey()
	for _, c := range []struct{ path, field string }{{agentsPath, "agents"}, {"/api/public/v1/wallets", "wallets"}} {
		for _, key := range []string{e.key, agentKey} {
			status, body := e.do("GET", c.path, key, nil)
			next, _ := body["next_cursor"].(string)
			if status != 200 || len(body[c.field].([]any)) != 100 || next == "" {
				t.Fatalf("bare GET %s: %d, %d items, next_cursor %v", c.path, status, len(body[c.field].([]any)), body["next_cursor"])
			}
			got, pages := e.readPages(c.path, c.field, key)
			if pages != 3 {
				t.Fatalf("GET %s: %d pages for 230 wallets, want 3", c.path, pages)
			}
			exactlyOnce(t, c.path, got, ids)
		}
	}
	// The Go client's whole lists follow the cursors.
	c := client.New(e.url, agentKey, client.WithRetries(0))
	as, err := c.ListAgents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := c.ListWallets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var fromClient []string
	for i := range as {
		fromClient = append(fromClient, as[i].ID)
	}
	exactlyOnce(t, "client.ListAgents", fromClient, ids)
	fromClient = nil
	for i := range ws {
		fromClient = append(fromClient, ws[i].ID)
	}
	exactlyOnce(t, "client.ListWallets", fromClient, ids)
	// limit still asks for up to 500, and past it is refused.
	if got, pages := e.readPages(agentsPath+"?limit=500", "agents", e.key); pages != 1 || len(got) != 230 {
		t.Fatalf("limit=500: %d pages, %d agents", pages, len(got))
	}
	status, body := e.do("GET", agentsPath+"?limit=501", e.key, nil)
	if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "limit") {
		t.Fatalf("limit=501: %d %v", status, body)
	}
}

// Pages of wallets with full address books, of keys scoped to 1,000
// wallets, and of audit entries recording big policies stay within the
// page budget whatever limit asks for; each ends early with a cursor, and
// following the cursors lists every item exactly once.
func TestLists_PagesStayUnderTheByteBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	book := fullAddressBook()
	big := e.insertWallets(24, book)

	for _, path := range []string{agentsPath, agentsPath + "?limit=500", agentsPath + "?limit=100&q=bulk"} {
		got, pages := e.readPages(path, "agents", e.key)
		exactlyOnce(t, path, got, big)
		if pages < 3 {
			t.Fatalf("%s: %d pages of wallets of about 300 KB each", path, pages)
		}
	}
	// The single-agent answer carries the whole address book.
	status, a := e.do("GET", agentsPath+"/"+big[0], e.key, nil)
	if status != 200 || len(a["policy"].(map[string]any)["allowlist_labels"].(map[string]any)) != 1000 {
		t.Fatalf("get agent: %d", status)
	}

	// Keys scoped to 1,000 wallets each: about 39 KB apiece.
	scope := make(auth.WalletScope, 1000)
	for i := range scope {
		scope[i] = uuid.New()
	}
	keys := make([]auth.APIKey, 60)
	var keyIDs []string
	for i := range keys {
		hash := make([]byte, 32)
		_, _ = rand.Read(hash)
		id := uuid.New()
		keys[i] = auth.APIKey{ID: id, AccountID: e.account.ID, Prefix: "svc_test_bulk00", Hash: hash, Role: auth.RoleAgent,
			Wallets: scope, Lineage: id, Ancestors: []string{}, CreatedAt: time.Now().UTC().Truncate(time.Microsecond).Add(-time.Duration(i) * time.Second)}
		keyIDs = append(keyIDs, auth.KeyActorID(id))
	}
	if _, err := e.db.NewInsert().Model(&keys).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	got, pages := e.readPages(keysPath+"?limit=100", "keys", e.key)
	exactlyOnce(t, "keys", got, append(keyIDs, "key_"+keyIDOf(t, e, e.key)))
	if pages < 3 {
		t.Fatalf("keys: %d pages for 2.3 MB of keys", pages)
	}

	// Audit entries of policy changes between two full address books.
	doc := book.Doc()
	var entryIDs []string
	for range 8 {
		err := audit.Append(ctx, e.db, audit.Entry{
			AccountID: e.account.ID,
			At:        time.Now(),
			Actor:     audit.System,
			Action:    audit.ActionPolicyUpdated,
			Target:    wallet.Target(uuid.New()),
			Details:   map[string]any{"before": doc, "after": doc},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []audit.Record
	if err := e.db.NewSelect().Model(&all).Column("id").Where("account_id = ?", e.account.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, en := range all {
		entryIDs = append(entryIDs, en.ID.String())
	}
	got, pages = e.readPages("/api/public/v1/audit-log?limit=100", "entries", e.key)
	exactlyOnce(t, "audit log", got, entryIDs)
	if pages < 4 {
		t.Fatalf("audit log: %d pages for 8 entries of about 600 KB", pages)
	}
}

// agentWallets creates n wallets with key, each answered 201.
func (e *env) agentWallets(key string, n int) {
	e.t.Helper()
	for i := range n {
		if status, body := e.do("POST", agentsPath, key, map[string]any{"label": fmt.Sprint("by agent ", i)}); status != http.StatusCreated {
			e.t.Fatalf("create wallet %d: %d %v", i, status, body)
		}
	}
}

// Agent keys create at most 100 wallets and have at most 20 live keys of
// their making in an account (the defaults), whichever agent key asks;
// past them 409 and nothing is created. Admin keys and owners are not
// held to these caps, and a revocation makes room for keys.
func TestCaps_AgentKeysHaveTheirOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agent := e.agentKey()
	_, other := e.agentKey()
	owner, _ := e.session(auth.RoleOwner)

	e.agentWallets(agent, 60)
	e.agentWallets(other, 40)
	for _, key := range []string{agent, other} {
		before := e.countRows("wallets")
		status, body := e.do("POST", agentsPath, key, map[string]any{"label": "one too many"})
		wantError(t, status, body, http.StatusConflict, "agent keys have created 100 wallets in this account, the most they may")
		if e.countRows("wallets") != before {
			t.Fatal("a refused create made a wallet")
		}
	}
	if status, body := e.do("POST", agentsPath, e.key, map[string]any{"label": "by the admin"}); status != http.StatusCreated {
		t.Fatalf("admin key past the agents' cap: %d %v", status, body)
	}
	status, raw, _ := e.request("POST", agentsPath, "", map[string]any{"label": "by the owner"}, owner)
	if status != http.StatusCreated {
		t.Fatalf("owner past the agents' cap: %d %s", status, raw)
	}
	// A key the admin made for an agent is an agent key: the cap holds.
	status, body := e.do("POST", agentsPath, e.newKey(e.key, nil)["key"].(string), map[string]any{"label": "x"})
	wantError(t, status, body, http.StatusConflict, "agent keys have created 100 wallets")

	// Keys: 20 live keys of agent keys' making, the keys those keys make
	// included.
	minted := e.newKey(agent, map[string]any{"label": "helper"})
	for range 14 {
		e.newKey(agent, nil)
	}
	for range 5 {
		e.newKey(minted["key"].(string), nil)
	}
	for _, key := range []string{agent, other, minted["key"].(string)} {
		status, body := e.do("POST", keysPath, key, nil)
		wantError(t, status, body, http.StatusConflict, "agent keys have created 20 live keys in this account, the most they may")
	}
	e.newKey(e.key, nil)
	e.newKey(e.key, map[string]any{"role": "admin"})
	status, raw, _ = e.request("POST", keysPath, "", map[string]any{"label": "by the owner"}, owner)
	if status != http.StatusCreated {
		t.Fatalf("owner past the agents' key cap: %d %s", status, raw)
	}
	// A rotation keeps the count, revoking an admin's key makes no room,
	// revoking a minted key makes room for one.
	status, body = e.do("POST", keysPath+"/"+minted["id"].(string)+"/rotate", agent, nil)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("rotate a minted key: %d %v", status, body)
	}
	minted = body
	status, body = e.do("POST", keysPath, agent, nil)
	wantError(t, status, body, http.StatusConflict, "agent keys have created 20 live keys")
	adminsAgentKey := e.newKey(e.key, nil)
	if status, body := e.do("DELETE", keysPath+"/"+adminsAgentKey["id"].(string), e.key, nil); status != 200 {
		t.Fatalf("revoke: %d %v", status, body)
	}
	status, body = e.do("POST", keysPath, agent, nil)
	wantError(t, status, body, http.StatusConflict, "agent keys have created 20 live keys")
	if status, body := e.do("DELETE", keysPath+"/"+minted["id"].(string), agent, nil); status != 200 {
		t.Fatalf("revoke a minted key: %d %v", status, body)
	}
	e.newKey(agent, nil)
	status, body = e.do("POST", keysPath, other, nil)
	wantError(t, status, body, http.StatusConflict, "agent keys have created 20 live keys")
}

// Concurrent creates by agent keys never pass their caps: the count is
// taken under the account row's lock.
func TestCaps_ConcurrentAgentCreatesCannotPassThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, agent := e.agentKey()
	e.agentWallets(agent, 95)
	created := concurrently(t, 12, func(i int) int {
		status, _ := e.with(t).do("POST", agentsPath, agent, map[string]any{"label": fmt.Sprint("racer ", i)})
		return status
	})
	if created != 5 {
		t.Fatalf("%d of 12 concurrent wallet creates passed with room for 5", created)
	}
	for range 16 {
		e.newKey(agent, nil)
	}
	created = concurrently(t, 12, func(int) int {
		status, _ := e.with(t).do("POST", keysPath, agent, nil)
		return status
	})
	if created != 4 {
		t.Fatalf("%d of 12 concurrent key creates passed with room for 4", created)
	}
	var n int
	err := e.db.NewRaw(`SELECT count(*) FROM api_keys AS k JOIN api_keys AS c ON c.id = k.created_by
		WHERE k.account_id = ? AND k.revoked_at IS NULL AND c.role = 'agent'`, e.account.ID).Scan(context.Background(), &n)
	if err != nil || n != 20 {
		t.Fatalf("%d live keys by agent keys (%v)", n, err)
	}
}

// GET /users lists every user, so an account has at most 1,000 of them:
// the 1,001st is refused (409) and nothing is added.
func TestCaps_UsersAreCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	us := make([]auth.User, 999)
	for i := range us {
		us[i] = auth.User{AccountID: e.account.ID, Address: newAddress(), Role: auth.RoleViewer, CreatedAt: time.Now()}
	}
	if _, err := e.db.NewInsert().Model(&us).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if status, body := e.do("POST", "/api/public/v1/users", e.key, map[string]any{"address": newAddress(), "role": "viewer"}); status != http.StatusCreated {
		t.Fatalf("the 1,000th user: %d %v", status, body)
	}
	status, body := e.do("POST", "/api/public/v1/users", e.key, map[string]any{"address": newAddress(), "role": "approver"})
	wantError(t, status, body, http.StatusConflict, "the account has 1000 users, the most it may")
	status, raw, _ := e.request("GET", "/api/public/v1/users", e.key, nil, nil)
	if status != 200 || len(raw) > pageBudget/4 || e.countRows("users") != 1000 {
		t.Fatalf("list users: %d, %d bytes, %d users", status, len(raw), e.countRows("users"))
	}
}

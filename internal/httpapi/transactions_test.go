package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

const transactionsPath = "/api/public/v1/transactions"

// insertTransactions writes n transactions of wallet straight into the
// table, their created_at `ago` before now and then one second apart in
// groups of ten (so pages must break ties by id), with the given status.
func (e *env) insertTransactions(walletID string, n int, ago time.Duration, status string) {
	e.t.Helper()
	_, err := e.db.NewRaw(`INSERT INTO transactions (id, account_id, wallet_id, network, signature, amount_micros,
			counterparty, status, signed_tx, last_valid_block_height, created_at, updated_at)
		SELECT gen_random_uuid(), ?, ?, 'devnet', 'sig-' || gen_random_uuid(), 1000, 'cp', ?, '\x00', 1,
			now() - ? * interval '1 microsecond' - (g / 10) * interval '1 second', now()
		FROM generate_series(1, ?) AS g`,
		e.account.ID, walletID, status, ago.Microseconds(), n).Exec(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
}

// page reads one page of GET /transactions with query q.
func (e *env) page(q url.Values) (ids []string, next string, body map[string]any) {
	e.t.Helper()
	status, body := e.do("GET", transactionsPath+"?"+q.Encode(), e.key, nil)
	if status != http.StatusOK {
		e.t.Fatalf("GET /transactions?%s: %d %v", q.Encode(), status, body)
	}
	if _, ok := body["next_cursor"]; !ok {
		e.t.Fatalf("no next_cursor with parameters: %v", body)
	}
	for _, t := range body["transactions"].([]any) {
		ids = append(ids, t.(map[string]any)["id"].(string))
	}
	next, _ = body["next_cursor"].(string)
	return ids, next, body
}

// Paginating 1,000 transactions 100 at a time visits each exactly once
// while new ones are inserted, newer and older than the pages.
func TestTransactionsPaginationIsStable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.agent(nil, 0)
	e.insertTransactions(id, 1000, time.Hour, "confirmed")
	var before []string
	if err := e.db.NewSelect().Table("transactions").Column("id").Scan(context.Background(), &before); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var inserted atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// New sends land at the head; late commits anywhere in the range.
			e.insertTransactions(id, 3, 0, "pending")
			e.insertTransactions(id, 2, time.Hour+time.Duration(rand.IntN(100))*time.Second, "pending")
			inserted.Add(5)
			time.Sleep(5 * time.Millisecond)
		}
	})
	seen := map[string]int{}
	q := url.Values{"limit": {"100"}}
	pages := 0
	for {
		ids, next, _ := e.page(q)
		pages++
		if len(ids) > 100 {
			t.Fatalf("page of %d", len(ids))
		}
		for _, id := range ids {
			seen[id]++
		}
		if next == "" {
			break
		}
		q.Set("cursor", next)
	}
	close(stop)
	wg.Wait()
	if inserted.Load() == 0 {
		t.Fatal("nothing was inserted during the walk")
	}
	for _, id := range before {
		if seen[id] != 1 {
			t.Fatalf("transaction %s seen %d times", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("transaction %s seen %d times", id, n)
		}
	}
	t.Logf("%d pages, %d rows seen, %d inserted during the walk", pages, len(seen), inserted.Load())
}

func TestTransactionsFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, _ := e.agent(nil, 0)
	b, _ := e.agent(nil, 0)
	e.insertTransactions(a, 150, time.Hour, "confirmed")
	e.insertTransactions(b, 20, 0, "failed")

	// No parameters: the spec's answer, exactly: the last 100 and no cursor.
	status, body := e.do("GET", transactionsPath, e.key, nil)
	if status != 200 || len(body) != 1 || len(body["transactions"].([]any)) != 100 {
		t.Fatalf("plain: %d, keys %d, %d transactions", status, len(body), len(body["transactions"].([]any)))
	}
	first := body["transactions"].([]any)[0].(map[string]any)
	if first["wallet_id"] != b || first["status"] != "failed" {
		t.Fatalf("newest first: %v", first)
	}

	ids, next, _ := e.page(url.Values{"wallet_id": {a}, "limit": {"500"}})
	if len(ids) != 150 || next != "" {
		t.Fatalf("wallet a: %d rows, next %q", len(ids), next)
	}
	ids, _, _ = e.page(url.Values{"status": {"failed"}})
	if len(ids) != 20 {
		t.Fatalf("failed: %d", len(ids))
	}
	ids, _, _ = e.page(url.Values{"status": {"pending"}})
	if len(ids) != 0 {
		t.Fatalf("pending: %d", len(ids))
	}
	// a's rows span (1h + 15s, 1h] ago; b's are within the last 2 seconds.
	since := time.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	ids, _, _ = e.page(url.Values{"since": {since}})
	if len(ids) != 20 {
		t.Fatalf("since: %d", len(ids))
	}
	ids, _, _ = e.page(url.Values{"until": {since}, "limit": {"500"}})
	if len(ids) != 150 {
		t.Fatalf("until: %d", len(ids))
	}
	ids, _, _ = e.page(url.Values{"since": {since}, "wallet_id": {a}})
	if len(ids) != 0 {
		t.Fatalf("since for a: %d", len(ids))
	}

	// Refusals: another account's wallet is 404; bad values 4xx naming them.
	other, otherKey := e.newAccount("devnet")
	_ = other
	status, oa := e.do("POST", "/api/public/v1/agents", otherKey, map[string]any{"label": "theirs"})
	if status != 201 {
		t.Fatal(status)
	}
	status, body = e.do("GET", transactionsPath+"?wallet_id="+oa["id"].(string), e.key, nil)
	wantError(t, status, body, http.StatusNotFound, "not found")
	status, body = e.do("GET", transactionsPath+"?wallet_id="+uuid.NewString(), e.key, nil)
	wantError(t, status, body, http.StatusNotFound, "not found")
	for q, want := range map[string]string{
		"wallet_id=nope":                    "wallet_id",
		"status=sent":                       "status",
		"limit=501":                         "limit",
		"limit=0":                           "limit",
		"since=yesterday":                   "since",
		"until=2026-13-01":                  "until",
		"cursor=%21%21":                     "cursor",
		"cursor=bm90LWl0":                   "cursor",
		"limit=1&cursor=x_":                 "cursor",
		"since=0000-06-01T00:00:00Z":        "since",
		"since=0001-01-01T00:00:00%2B01:00": "since",
		"until=1969-12-31T23:59:59Z":        "until",
	} {
		status, body := e.do("GET", transactionsPath+"?"+q, e.key, nil)
		if status != 400 && status != 422 {
			t.Fatalf("%s: %d %v", q, status, body)
		}
		wantError(t, status, body, status, want)
	}
}

func TestListWallets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, pa := e.agent(nil, 0)
	b, _ := e.agent(nil, 0)
	if status, _ := e.do("POST", fmt.Sprintf("/api/public/v1/agents/%s/freeze", a), e.key, nil); status != 200 {
		t.Fatal("freeze")
	}
	_, otherKey := e.newAccount("devnet")
	e.do("POST", "/api/public/v1/agents", otherKey, map[string]any{"label": "theirs"})

	status, body := e.do("GET", "/api/public/v1/wallets", e.key, nil)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	ws := body["wallets"].([]any)
	if len(ws) != 2 {
		t.Fatalf("wallets: %v", ws)
	}
	newest, oldest := ws[0].(map[string]any), ws[1].(map[string]any)
	if newest["id"] != b || oldest["id"] != a || oldest["pubkey"] != pa || oldest["state"] != "frozen" ||
		newest["state"] != "active" || oldest["label"] != "payer" || oldest["kind"] != "agent" || oldest["created_at"] == nil {
		t.Fatalf("wallets: %v", ws)
	}
	for _, w := range ws {
		if len(w.(map[string]any)) != 7 { // signer among them; exported_at only once exported
			t.Fatalf("wallet fields: %v", w)
		}
	}
}

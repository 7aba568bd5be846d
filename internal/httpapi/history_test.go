package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/asset"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// onlyPoints is the points of a balance history of one asset.
func onlyPoints(h map[string]any) []map[string]any {
	series, _ := h["series"].([]any)
	if len(series) != 1 {
		return nil
	}
	var out []map[string]any
	for _, p := range series[0].(map[string]any)["points"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// seriesOf is a balance history's series by asset: the amounts, oldest
// first, and each series' decimals; order lists the assets as answered.
func seriesOf(t *testing.T, h map[string]any) (amounts map[string][]any, decimals map[string]any, order []string) {
	t.Helper()
	amounts, decimals = map[string][]any{}, map[string]any{}
	series, _ := h["series"].([]any)
	for _, s := range series {
		s := s.(map[string]any)
		a := s["asset"].(string)
		order = append(order, a)
		decimals[a] = s["decimals"]
		for _, p := range s["points"].([]any) {
			p := p.(map[string]any)
			if p["asset"] != a {
				t.Fatalf("a point of %s names %v", a, p["asset"])
			}
			amounts[a] = append(amounts[a], p["amount"])
		}
	}
	return amounts, decimals, order
}

// historyTable is the devnet's assets and two an operator added, of 2 and
// 8 decimals: seven series with SOL.
func historyTable() asset.Table {
	t := asset.Defaults()
	t[solana.Devnet] = append(t[solana.Devnet],
		asset.Asset{Symbol: "CENT", Mint: sol.NewWallet().PublicKey(), Program: sol.TokenProgramID, Decimals: 2, Currency: asset.USD},
		asset.Asset{Symbol: "GOLD", Mint: sol.NewWallet().PublicKey(), Program: sol.TokenProgramID, Decimals: 8, Currency: asset.USD})
	return t
}

// GET /wallets/{id}/balance/history answers a series per asset asked:
// EURC by ?asset=EURC (any case), USDC by default, every asset of the
// network and SOL by ?asset=all (in GET /assets' order, then SOL), each
// point naming its asset and its amount in that asset's decimals; at one
// instant (at) or over a range, oldest first. An unknown asset is a 422,
// as are more points over all series than a history answers.
func TestHistory_PerAssetSeries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{assets: historyTable()})
	id, _ := e.agent(nil, 0)
	wid := uuid.MustParse(id)
	t0 := time.Now().UTC().Add(-10 * time.Hour).Truncate(time.Hour)
	row := func(assetKey, address string, slot int, at time.Time, balance int64) {
		t.Helper()
		_, err := e.db.NewRaw(`INSERT INTO ledger (network, address, signature, wallet_id, asset, slot, at, balance) VALUES ('devnet', ?, ?, ?, ?, ?, ?, ?)`,
			address, fmt.Sprint("sig-", address, slot), wid, assetKey, slot, at, balance).Exec(t.Context())
		if err != nil {
			t.Fatal(err)
		}
	}
	row("usdc", "U1", 10, t0.Add(time.Hour), 2_000_000)
	row("usdc", "U2", 11, t0.Add(time.Hour), 500_000)
	row("eurc", "E1", 12, t0.Add(2*time.Hour), 12_500_000)
	row("eurc", "E1", 20, t0.Add(4*time.Hour), 3_000_001)
	row("sol", "W", 10, t0.Add(time.Hour), 1_250_000_000)
	row("cent", "C1", 13, t0.Add(2*time.Hour), 12_345)
	row("gold", "G1", 14, t0.Add(3*time.Hour), 1)
	path := "/api/public/v1/wallets/" + id + "/balance/history"
	get := func(q url.Values) (int, map[string]any) {
		t.Helper()
		return e.do("GET", path+"?"+q.Encode(), e.key, nil)
	}
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }

	for _, tc := range []struct {
		asset string
		want  map[string][]any
	}{
		{"EURC", map[string][]any{"EURC": {12.5}}},
		{"eurc", map[string][]any{"EURC": {12.5}}},
		{"", map[string][]any{"USDC": {2.5}}},
		{"Sol", map[string][]any{"SOL": {1.25}}},
		{"cent", map[string][]any{"CENT": {123.45}}},
		{"all", map[string][]any{"USDC": {2.5}, "PYUSD": {0.0}, "USDG": {0.0}, "EURC": {12.5}, "CENT": {123.45}, "GOLD": {0.0}, "SOL": {1.25}}},
	} {
		q := url.Values{"at": {at(150 * time.Minute)}}
		if tc.asset != "" {
			q.Set("asset", tc.asset)
		}
		status, h := get(q)
		got, _, _ := seriesOf(t, h)
		if status != http.StatusOK || h["wallet_id"] != id || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("asset %q at %s: %d %v, want %v", tc.asset, at(150*time.Minute), status, h, tc.want)
		}
	}
	status, h := get(url.Values{"asset": {"all"}, "at": {at(5 * time.Hour)}})
	amounts, decimals, order := seriesOf(t, h)
	if status != http.StatusOK || fmt.Sprint(order) != "[USDC PYUSD USDG EURC CENT GOLD SOL]" ||
		fmt.Sprint(decimals) != "map[CENT:2 EURC:6 GOLD:8 PYUSD:6 SOL:9 USDC:6 USDG:6]" || amounts["EURC"][0] != 3.000001 || amounts["GOLD"][0] != 1e-8 {
		t.Fatalf("every asset after the changes: %d %v", status, h)
	}
	// A range: one point per hour, oldest first, each the balance after
	// the last change at or before it.
	status, h = get(url.Values{"asset": {"EURC"}, "from": {at(time.Hour)}, "to": {at(5 * time.Hour)}, "interval": {"hour"}})
	points := onlyPoints(h)
	var got []string
	for _, p := range points {
		got = append(got, fmt.Sprint(p["at"], "=", p["amount"]))
	}
	want := fmt.Sprintf("[%s=0 %s=12.5 %s=12.5 %s=3.000001 %s=3.000001]", at(time.Hour), at(2*time.Hour), at(3*time.Hour), at(4*time.Hour), at(5*time.Hour))
	if status != http.StatusOK || fmt.Sprint(got) != want {
		t.Fatalf("EURC by the hour: %d %v, want %s", status, got, want)
	}

	for name, q := range map[string]url.Values{
		"an unknown asset":               {"asset": {"DOGE"}},
		"an asset of no table":           {"asset": {"usdc "}},
		"at with a range":                {"asset": {"EURC"}, "at": {at(0)}, "interval": {"hour"}},
		"seven assets at 1,000 instants": {"asset": {"all"}, "from": {at(-999 * time.Hour)}, "to": {at(0)}, "interval": {"hour"}},
		"one asset at 1,001 instants":    {"asset": {"EURC"}, "from": {at(-1000 * time.Hour)}, "to": {at(0)}, "interval": {"hour"}},
		"an asset longer than a symbol":  {"asset": {"ABCDEFGHIJK"}},
		"an unknown asset with an at":    {"asset": {"XYZ"}, "at": {at(0)}},
		"an unknown asset with a range":  {"asset": {"XYZ"}, "interval": {"day"}},
	} {
		if status, h := get(q); status != http.StatusUnprocessableEntity || h["error"] == nil || h["error"] == "" {
			t.Errorf("%s: %d %v", name, status, h)
		}
	}
	// One asset at 1,000 instants is within the bound.
	if status, h := get(url.Values{"asset": {"EURC"}, "from": {at(-999 * time.Hour)}, "to": {at(0)}, "interval": {"hour"}}); status != http.StatusOK || len(onlyPoints(h)) != 1000 {
		t.Fatalf("EURC at 1,000 instants: %d", status)
	}
}

// The differences of a wallet name their asset in upper case with amounts
// in its decimals, and filter by asset (any case); an unknown asset is a
// 422. Deposits listed in GET /transactions and analytics' received name
// every asset the same way.
func TestHistory_DifferencesAndReceivedNameTheirAsset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{assets: historyTable()})
	id, _ := e.agent(nil, 0)
	wid := uuid.MustParse(id)
	now := time.Now().UTC()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := e.db.NewRaw(q, args...).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO unexplained_outflows (id, account_id, wallet_id, network, signature, asset, amount, slot, created_at, counterparty)
		VALUES (?, ?, ?, 'devnet', 'sig-e', 'eurc', 1500000, 1, ?, 'to')`, uuid.New(), e.account.ID, wid, now.Add(-time.Minute))
	exec(`INSERT INTO balance_snapshots (id, account_id, wallet_id, network, asset, slot, chain, ledger, taken_at)
		VALUES (?, ?, ?, 'devnet', 'cent', 2, 100, 12345, ?)`, uuid.New(), e.account.ID, wid, now)
	path := "/api/public/v1/wallets/" + id + "/balance/differences"
	status, got := e.do("GET", path, e.key, nil)
	items, _ := got["items"].([]any)
	if status != http.StatusOK || len(items) != 2 {
		t.Fatalf("differences: %d %v", status, got)
	}
	cent, eurc := items[0].(map[string]any), items[1].(map[string]any)
	if cent["asset"] != "CENT" || cent["amount"] != -122.45 || cent["chain"] != 1.0 || cent["ledger"] != 123.45 ||
		eurc["asset"] != "EURC" || eurc["amount"] != -1.5 || eurc["kind"] != "unexplained_outflow" {
		t.Fatalf("differences %v", items)
	}
	status, got = e.do("GET", path+"?asset=eurc", e.key, nil)
	if items, _ := got["items"].([]any); status != http.StatusOK || len(items) != 1 || items[0].(map[string]any)["asset"] != "EURC" {
		t.Fatalf("EURC differences: %d %v", status, got)
	}
	if status, got := e.do("GET", path+"?asset=SOL", e.key, nil); status != http.StatusOK || len(got["items"].([]any)) != 0 {
		t.Fatalf("SOL differences: %d %v", status, got)
	}
	if status, got := e.do("GET", path+"?asset=DOGE", e.key, nil); status != http.StatusUnprocessableEntity || got["error"] == nil {
		t.Fatalf("DOGE differences: %d %v", status, got)
	}

	deposit := func(assetKey string, amount int64) {
		exec(`INSERT INTO deposits (id, account_id, wallet_id, network, signature, asset, amount, counterparty, slot, status, created_at)
			VALUES (?, ?, ?, 'devnet', ?, ?, ?, 'from', 1, 'confirmed', ?)`, uuid.New(), e.account.ID, wid, "dep-"+assetKey, assetKey, amount, now)
	}
	deposit("eurc", 2_500_000)
	deposit("cent", 250)
	deposit("sol", 10_000_000)
	status, txs := e.do("GET", "/api/public/v1/transactions?asset=cent", e.key, nil)
	if list, _ := txs["transactions"].([]any); status != http.StatusOK || len(list) != 1 ||
		list[0].(map[string]any)["asset"] != "CENT" || list[0].(map[string]any)["amount"] != 2.5 {
		t.Fatalf("the CENT deposit listed: %d %v", status, txs)
	}
	status, a := e.do("GET", "/api/public/v1/analytics", e.key, nil)
	received := map[string]string{}
	for _, r := range a["received"].([]any) {
		r := r.(map[string]any)
		received[r["asset"].(string)] = fmt.Sprint(r["amount"], "/", r["deposits"])
	}
	if status != http.StatusOK || fmt.Sprint(received) != "map[CENT:2.5/1 EURC:2.5/1 SOL:0.01/1]" {
		t.Fatalf("received %d %v", status, a["received"])
	}
}

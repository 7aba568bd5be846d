package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/custody"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/wallet"
)

// recoveryEntry is one of a wallet's recovery audit entries.
type recoveryEntry struct {
	Action  string
	Details map[string]any
}

func (o *offline) recoveryEntries(t *testing.T) []recoveryEntry {
	t.Helper()
	var rows []struct {
		Action  string
		Details json.RawMessage
	}
	if err := o.db.NewRaw(`SELECT action, details FROM audit_log WHERE target = ? AND action LIKE 'wallet.recover%' ORDER BY at`,
		wallet.Target(o.w.ID)).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := make([]recoveryEntry, len(rows))
	for i, r := range rows {
		out[i].Action = r.Action
		if err := json.Unmarshal(r.Details, &out[i].Details); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (o *offline) walletState(t *testing.T) string {
	t.Helper()
	var state string
	if err := o.db.NewRaw(`SELECT state FROM wallets WHERE id = ?`, o.w.ID).Scan(context.Background(), &state); err != nil {
		t.Fatal(err)
	}
	return state
}

// rpcWatch is an RPC node in front of next that, when the command asks
// for a blockhash (which it needs to sign), notes whether the wallet is
// already frozen with the run's intent recorded, and calls sent (if set)
// once a sendTransaction has been answered by next, before the command
// hears the answer.
type rpcWatch struct {
	URL string

	mu       sync.Mutex
	operator string   // the run's
	early    []string // what a blockhash request found missing
	asked    int      // blockhash requests
	sent     func()
}

func newRPCWatch(t *testing.T, o *offline, next string) *rpcWatch {
	w := &rpcWatch{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"getLatestBlockhash"`)) {
			w.mu.Lock()
			w.asked++
			started := slices.ContainsFunc(o.recoveryEntries(t), func(e recoveryEntry) bool {
				return e.Action == custody.ActionRecoveryStarted && e.Details["operator"] == w.operator
			})
			if state := o.walletState(t); !started || state != "frozen" {
				w.early = append(w.early, "wallet "+state+", intent recorded: "+map[bool]string{true: "yes", false: "no"}[started])
			}
			w.mu.Unlock()
		}
		resp, err := http.Post(next, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if bytes.Contains(body, []byte(`"sendTransaction"`)) {
			w.mu.Lock()
			sent := w.sent
			w.mu.Unlock()
			if sent != nil {
				sent()
			}
		}
		rw.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		rw.WriteHeader(resp.StatusCode)
		rw.Write(out)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// `worker recover` needs --operator and --reason, and records them with
// the wallet's freeze before it signs anything. A run interrupted after
// signing (its transaction refused by the node and never sent, or sent and
// landed with the answer lost) is finished by the next run: the USDC
// moves once, in one transaction, which is recorded as its recovery (the
// SOL follows); the audit log shows both runs' intents.
func TestRecover_RecordsItsIntentFirstAndFinishesAnInterruptedRun(t *testing.T) {
	t.Parallel()
	o := newOffline(t, 4_000_000, 1_000_000_000)
	to := sol.NewWallet().PublicKey().String()
	base := []string{"recover", "--wallet", o.w.ID.String(), "--to", to}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(base), "--reason", "key leaked"), "--operator is required"},
		{append(slices.Clone(base), "--operator", "alice"), "--reason is required"},
		{append(slices.Clone(base), "--operator", " ", "--reason", "key leaked"), "--operator is required"},
	} {
		if _, err := o.run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if s, e := o.walletState(t), o.recoveryEntries(t); s != "active" || len(e) != 0 {
		t.Fatalf("refused runs left the wallet %s and %d recovery entries", s, len(e))
	}

	for _, tc := range []struct {
		name string
		// faults of the node while the first run sends
		faults localnettest.ProxyFaults
		// the first run's transaction landed
		landed bool
	}{
		{"the send never went out", localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, Methods: []string{"sendTransaction"}}, false},
		{"the send went out unheard", localnettest.ProxyFaults{Status: http.StatusServiceUnavailable, StatusAfterForward: true, Methods: []string{"sendTransaction"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOffline(t, 7_654_321, 1_000_000_000)
			node := localnettest.NewFaultProxy(t, o.ln.URL)
			watch := newRPCWatch(t, o, node.URL)
			o.env["SOLANA_RPC_URL_DEVNET"] = watch.URL
			to := sol.NewWallet().PublicKey().String()
			args := []string{"recover", "--wallet", o.w.ID.String(), "--to", to}

			// The first run is stopped once its transaction has been
			// sent (or refused): as a process killed there.
			node.Set(t, tc.faults)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			watch.mu.Lock()
			watch.operator, watch.sent = "alice", stop
			watch.mu.Unlock()
			var out bytes.Buffer
			err := run(ctx, append(args, "--operator", "alice", "--reason", "the worker host was taken"), func(k string) string { return o.env[k] }, &out)
			if err == nil {
				t.Fatalf("the interrupted run finished: %s", out.String())
			}
			entries := o.recoveryEntries(t)
			if len(entries) != 2 || entries[0].Action != custody.ActionRecoveryStarted || entries[1].Action != custody.ActionRecoverySigned ||
				entries[0].Details["operator"] != "alice" || entries[0].Details["reason"] != "the worker host was taken" {
				t.Fatalf("after the interrupted run: %+v", entries)
			}
			if s := o.walletState(t); s != "frozen" {
				t.Fatalf("after the interrupted run the wallet is %s", s)
			}
			first := entries[1].Details["signature"].(string)
			if tc.landed {
				// It landed: the address has the money, unrecorded.
				for o.usdc(t, to) == 0 {
					time.Sleep(50 * time.Millisecond)
				}
			} else if got := o.usdc(t, to); got != 0 {
				t.Fatalf("a refused send moved %d", got)
			}

			// The second run, by another person, finishes it.
			node.Set(t, localnettest.ProxyFaults{})
			watch.mu.Lock()
			watch.operator, watch.sent = "bob", nil
			watch.mu.Unlock()
			out2, err := o.run(t, append(args, "--operator", "bob", "--reason", "finish alice's recovery")...)
			if err != nil {
				t.Fatalf("second run: %v (%s)", err, out2)
			}
			if got, left := o.usdc(t, to), o.usdc(t, o.w.Pubkey); got != 7_654_321 || left != 0 {
				t.Fatalf("the address holds %d and the wallet %d, want the whole balance moved once", got, left)
			}
			entries = o.recoveryEntries(t)
			var started, signed, recovered []map[string]any
			for _, e := range entries {
				switch e.Action {
				case custody.ActionRecoveryStarted:
					started = append(started, e.Details)
				case custody.ActionRecoverySigned:
					if e.Details["asset"] == "USDC" {
						signed = append(signed, e.Details)
					}
				case custody.ActionRecovered:
					if e.Details["asset"] == "USDC" {
						recovered = append(recovered, e.Details)
					}
				}
			}
			if len(started) != 2 || started[0]["operator"] != "alice" || started[1]["operator"] != "bob" || started[1]["reason"] != "finish alice's recovery" {
				t.Fatalf("intents %v", started)
			}
			if len(recovered) != 1 || recovered[0]["to"] != to || recovered[0]["amount"] != 7.654321 {
				t.Fatalf("recovered %v", recovered)
			}
			sig := recovered[0]["signature"].(string)
			if !slices.ContainsFunc(signed, func(d map[string]any) bool { return d["signature"] == sig }) {
				t.Fatalf("the recovery's transaction %s was never recorded as signed: %v", sig, signed)
			}
			// The first run's transaction is the recovery when it landed;
			// when it was never sent it is sent again, unless its
			// blockhash expired meanwhile (then one more is signed).
			if (tc.landed || len(signed) == 1) && (sig != first || len(signed) != 1) {
				t.Fatalf("recovered by %s after %d transactions signed, want the first run's %s alone", sig, len(signed), first)
			}
			if !strings.Contains(out2, sig) || !strings.Contains(out2, to) {
				t.Fatalf("second run's output %q", out2)
			}
			if s := o.walletState(t); s != "frozen" {
				t.Fatalf("the wallet is %s", s)
			}
			watch.mu.Lock()
			defer watch.mu.Unlock()
			if watch.asked == 0 || len(watch.early) > 0 {
				t.Fatalf("%d blockhash requests; before the intent was recorded: %v", watch.asked, watch.early)
			}
		})
	}
}

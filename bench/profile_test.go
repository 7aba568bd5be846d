package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// ProfileWindow is results/pprof/window.json: what the profiles cover.
type ProfileWindow struct {
	Seconds int     `json:"seconds"`
	Sends   int64   `json:"sends"`
	Errors  int64   `json:"errors"`
	PerSec  float64 `json:"sends_per_s"`
	CPU     *CPU    `json:"cpu_ms_per_send"`
	// Per send: SQL statements run (pg_stat_statements, triggers'
	// included), transactions committed, and Redis commands.
	PGStatements  float64 `json:"pg_statements_per_send"`
	PGExecMs      float64 `json:"pg_exec_ms_per_send"`
	PGPlanMs      float64 `json:"pg_plan_ms_per_send"`
	PGXacts       float64 `json:"pg_transactions_per_send"`
	RedisCommands float64 `json:"redis_commands_per_send"`
	// RPCCalls is the localnet's JSON-RPC calls per send, by method.
	RPCCalls map[string]float64 `json:"rpc_calls_per_send"`
}

// profileFull profiles every api and worker process while op's load runs
// from conc clients (BENCH_PPROF_SECONDS, 15 s): a CPU profile, and the
// allocations made in the window (an allocs profile before and after, the
// first the second's base). It writes results/pprof/<prefix><process>.cpu.pprof,
// .allocs.pprof and -base, and `go tool pprof -top` of each, flat and
// cumulative, as .txt next to them; <prefix>window.json and the window's
// PostgreSQL statements and Redis commands per operation.
func profileFull(b *testing.B, stack *Stack, prefix string, conc int, op func(c, i int) error) {
	secs := envInt("BENCH_PPROF_SECONDS", 15)
	dir := filepath.Join("results", "pprof")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	svcs := append(append([]*Service{}, stack.APIs...), stack.Workers...)
	fetch := func(sv *Service, path, file string) {
		resp, err := http.Get("http://" + sv.Pprof + path)
		if err != nil {
			b.Fatalf("%s %s: %v", sv.Name, path, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			body, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s %s: %d %s", sv.Name, path, resp.StatusCode, body)
		}
		f, err := os.Create(filepath.Join(dir, file))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			b.Fatal(err)
		}
	}
	for _, sv := range svcs {
		fetch(sv, "/debug/pprof/allocs", prefix+sv.Name+".allocs-base.pprof")
	}

	// Load until the CPU profiles are in.
	stop := make(chan struct{})
	var sends, errs atomic.Int64
	var load sync.WaitGroup
	for c := range conc {
		load.Go(func() {
			for i := c; ; i += conc {
				select {
				case <-stop:
					return
				default:
				}
				if err := op(c, i); err != nil {
					if errs.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "bench (profiled):", err)
					}
				}
				sends.Add(1)
			}
		})
	}
	time.Sleep(time.Second) // at full load before the window opens
	stats := openStats(b, stack)
	defer stats.close()
	stats.reset(b)
	stack.Localnet.ResetCalls(b)
	before, from := sampleCPU(stack.Procs), sends.Load()
	var profiles sync.WaitGroup
	for _, sv := range svcs {
		profiles.Go(func() { fetch(sv, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), prefix+sv.Name+".cpu.pprof") })
	}
	profiles.Wait()
	after, to := sampleCPU(stack.Procs), sends.Load()
	pgText, redisText, st := stats.read(b, float64(max(1, to-from)))
	calls := stack.Localnet.Calls(b)
	close(stop)
	load.Wait()
	for _, sv := range svcs {
		fetch(sv, "/debug/pprof/allocs", prefix+sv.Name+".allocs.pprof")
	}

	w := ProfileWindow{Seconds: secs, Sends: to - from, Errors: errs.Load(), PerSec: round(float64(to-from)/after.at.Sub(before.at).Seconds(), 1),
		CPU: cpuPerOp(stack.Procs, before, after, float64(max(1, to-from)))}
	w.PGStatements, w.PGExecMs, w.PGPlanMs = round(st.statements, 2), round(st.execMs, 3), round(st.planMs, 3)
	w.PGXacts, w.RedisCommands = round(st.xacts, 2), round(st.redis, 2)
	w.RPCCalls = map[string]float64{}
	for m, n := range calls {
		w.RPCCalls[m] = round(float64(n)/float64(max(1, to-from)), 3)
	}
	writeResults(b, filepath.Join("pprof", prefix+"window.json"), w)
	for name, text := range map[string]string{prefix + "postgres-statements.txt": pgText, prefix + "redis-commands.txt": redisText} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("\nprofiles: %d s, %d operations (%.0f/s) at %d clients, service CPU %.2f ms each; in %s/%s*\n", secs, w.Sends, w.PerSec, conc, w.CPU.Service, dir, prefix)

	for _, sv := range svcs {
		bin := filepath.Join(stack.Bin, sv.Role)
		name := prefix + sv.Name
		cpu, allocs, base := filepath.Join(dir, name+".cpu.pprof"), filepath.Join(dir, name+".allocs.pprof"), filepath.Join(dir, name+".allocs-base.pprof")
		for _, t := range []struct {
			out  string
			args []string
		}{
			{name + ".cpu.txt", []string{"-top", "-nodecount=40", bin, cpu}},
			{name + ".cpu-cum.txt", []string{"-top", "-cum", "-nodecount=80", bin, cpu}},
			{name + ".allocs.txt", []string{"-top", "-nodecount=40", "-sample_index=alloc_space", "-base", base, bin, allocs}},
			{name + ".allocs-cum.txt", []string{"-top", "-cum", "-nodecount=80", "-sample_index=alloc_space", "-base", base, bin, allocs}},
		} {
			out, err := exec.Command("go", append([]string{"tool", "pprof"}, t.args...)...).CombinedOutput()
			if err != nil {
				b.Fatalf("go tool pprof %v: %v\n%s", t.args, err, out)
			}
			if err := os.WriteFile(filepath.Join(dir, t.out), out, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// serverStats reads what the private PostgreSQL and Redis did in the
// profile window: pg_stat_statements and the committed transactions, and
// Redis's command statistics.
type serverStats struct {
	pg    *pgx.Conn
	redis *redis.Client
	xacts int64
}

func openStats(b *testing.B, stack *Stack) *serverStats {
	ctx := context.Background()
	pg, err := pgx.Connect(ctx, stack.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pg.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Fatal(err)
	}
	opts, err := redis.ParseURL(stack.RedisURL)
	if err != nil {
		b.Fatal(err)
	}
	return &serverStats{pg: pg, redis: redis.NewClient(opts)}
}

func (s *serverStats) close() {
	s.pg.Close(context.Background())
	s.redis.Close()
}

func (s *serverStats) commits(b *testing.B) int64 {
	var n int64
	if err := s.pg.QueryRow(context.Background(), "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func (s *serverStats) reset(b *testing.B) {
	ctx := context.Background()
	if _, err := s.pg.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		b.Fatal(err)
	}
	// pg_stat_database is updated when a backend reports (at most every
	// 10 ms-1 s); the window is long enough for that to blur out.
	s.xacts = s.commits(b)
	if err := s.redis.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
}

type statsSummary struct {
	statements, execMs, planMs, xacts, redis float64
}

// read formats the window's statements and commands per send, the
// costliest first.
func (s *serverStats) read(b *testing.B, sends float64) (pgText, redisText string, sum statsSummary) {
	ctx := context.Background()
	rows, err := s.pg.Query(ctx, `SELECT calls, total_exec_time, total_plan_time, rows, query FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time + total_plan_time DESC`)
	if err != nil {
		b.Fatal(err)
	}
	var pg strings.Builder
	fmt.Fprintf(&pg, "%9s %9s %9s %8s  %s\n", "calls/snd", "exec_ms/s", "plan_ms/s", "rows/cl", "statement (pg_stat_statements, per send, costliest first)")
	for rows.Next() {
		var calls, nrows int64
		var exec, plan float64
		var query string
		if err := rows.Scan(&calls, &exec, &plan, &nrows, &query); err != nil {
			b.Fatal(err)
		}
		sum.statements += float64(calls) / sends
		sum.execMs += exec / sends
		sum.planMs += plan / sends
		if calls == 0 {
			continue
		}
		query = strings.Join(strings.Fields(query), " ")
		if len(query) > 160 {
			query = query[:160] + "…"
		}
		fmt.Fprintf(&pg, "%9.2f %9.3f %9.3f %8.1f  %s\n", float64(calls)/sends, exec/sends, plan/sends, float64(nrows)/float64(calls), query)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	sum.xacts = float64(s.commits(b)-s.xacts) / sends
	fmt.Fprintf(&pg, "total: %.2f statements, %.3f ms executing and %.3f ms planning, %.2f transactions committed per send\n",
		sum.statements, sum.execMs, sum.planMs, sum.xacts)
	pgText = pg.String()

	info, err := s.redis.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	type cmd struct {
		name        string
		calls, usec float64
	}
	var cmds []cmd
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		c := cmd{name: strings.TrimPrefix(name, "cmdstat_")}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				c.calls = f
			case "usec":
				c.usec = f
			}
		}
		cmds = append(cmds, c)
	}
	slices.SortFunc(cmds, func(a, b cmd) int { return cmp.Compare(b.usec, a.usec) })
	var rd strings.Builder
	fmt.Fprintf(&rd, "%10s %10s  %s\n", "calls/send", "usec/send", "command (Redis INFO commandstats, server time only)")
	var total, usec float64
	for _, c := range cmds {
		total += c.calls / sends
		usec += c.usec / sends
		fmt.Fprintf(&rd, "%10.2f %10.1f  %s\n", c.calls/sends, c.usec/sends, c.name)
	}
	fmt.Fprintf(&rd, "total: %.2f commands, %.1f usec per send\n", total, usec)
	sum.redis = total
	return pgText, rd.String(), sum
}

package bench

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux we run on; getconf CLK_TCK confirms it when present.
var clockTicks = func() float64 {
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}()

// procTimes is one process's line of /proc/<pid>/stat, in clock ticks.
type procTimes struct {
	ppid                         int
	utime, stime, cutime, cstime uint64
}

// readStat reads /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may hold spaces, so fields are counted after its ')'.
func readStat(pid int) (procTimes, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procTimes{}, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procTimes{}, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	// f[0] is field 3 (state): field n is f[n-3].
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procTimes{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(n int) uint64 { v, _ := strconv.ParseUint(f[n-3], 10, 64); return v }
	return procTimes{ppid: int(num(4)), utime: num(14), stime: num(15), cutime: num(16), cstime: num(17)}, nil
}

// procTable is every live process's times, read at one moment.
type procTable map[int]procTimes

func readProcTable() procTable {
	t := procTable{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil { // it may have exited meanwhile
			t[pid] = st
		}
	}
	return t
}

// treeTicks is the CPU of pid and all its descendants: each live process's
// own and reaped children's time (a backend that exited is in its
// parent's cutime/cstime). PostgreSQL's backends are the postmaster's
// children, so this is the server's whole CPU.
func (t procTable) treeTicks(pid int) uint64 {
	children := map[int][]int{}
	for p, st := range t {
		children[st.ppid] = append(children[st.ppid], p)
	}
	var sum uint64
	var walk func(int)
	walk = func(p int) {
		st, ok := t[p]
		if !ok {
			return
		}
		sum += st.utime + st.stime + st.cutime + st.cstime
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return sum
}

// selfTicks is pid's own CPU, without its children: the benchmark's
// process, whose children are the very processes measured.
func (t procTable) selfTicks(pid int) uint64 {
	st := t[pid]
	return st.utime + st.stime
}

// Proc is one measured process: the benchmark's api, worker, PostgreSQL
// (the postmaster and its backends), Redis, localnet or itself (client).
type Proc struct {
	Role string // api, worker, postgres, redis, localnet, client
	Name string // api-1, worker-2, …
	PID  int
	self bool // own CPU only (the client)
}

// cpuSample is each process's CPU at one moment.
type cpuSample struct {
	at    time.Time
	ticks map[string]uint64 // by Proc.Name
}

func sampleCPU(procs []Proc) cpuSample {
	t := readProcTable()
	s := cpuSample{at: time.Now(), ticks: map[string]uint64{}}
	for _, p := range procs {
		if p.self {
			s.ticks[p.Name] = t.selfTicks(p.PID)
		} else {
			s.ticks[p.Name] = t.treeTicks(p.PID)
		}
		if p.Role == "postgres" {
			for part, ticks := range t.postgresParts(p.PID) {
				s.ticks[p.Name+"/"+part] = ticks
			}
		}
	}
	return s
}

// postgresParts splits the server's CPU by the postmaster's children's
// titles: backends (client connections), autovacuum, the other
// background processes (WAL writer, checkpointer, …), and the postmaster
// with its exited children.
func (t procTable) postgresParts(postmaster int) map[string]uint64 {
	parts := map[string]uint64{"backends": 0, "autovacuum": 0, "background": 0, "postmaster": 0}
	if st, ok := t[postmaster]; ok {
		parts["postmaster"] = st.utime + st.stime + st.cutime + st.cstime
	}
	for pid, st := range t {
		if st.ppid != postmaster {
			continue
		}
		title, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		part := "background"
		switch s := string(title); {
		case strings.Contains(s, "autovacuum"):
			part = "autovacuum"
		case strings.Contains(s, "127.0.0.1(") || strings.Contains(s, "[local]"):
			part = "backends"
		}
		parts[part] += st.utime + st.stime + st.cutime + st.cstime
	}
	return parts
}

// CPU is milliseconds of CPU per operation: by role (processes of a role
// summed), by process, and the service's total (api + worker + postgres
// + redis). Client is the benchmark's own process (the load generator).
type CPU struct {
	API       float64            `json:"api"`
	Worker    float64            `json:"worker"`
	Postgres  float64            `json:"postgres"`
	Redis     float64            `json:"redis"`
	Localnet  float64            `json:"localnet"`
	Client    float64            `json:"client"`
	Service   float64            `json:"service"`
	ByProcess map[string]float64 `json:"by_process"`
	// Seconds is the wall time the figures cover.
	Seconds float64 `json:"seconds"`
}

// cpuPerOp is the CPU between two samples divided by ops (operations, or
// seconds for a rate).
func cpuPerOp(procs []Proc, before, after cpuSample, ops float64) *CPU {
	c := &CPU{ByProcess: map[string]float64{}, Seconds: round(after.at.Sub(before.at).Seconds(), 3)}
	ms := func(name string) float64 {
		return float64(int64(after.ticks[name])-int64(before.ticks[name])) * 1000 / clockTicks / ops
	}
	byRole := map[string]float64{}
	for _, p := range procs {
		c.ByProcess[p.Name] = round(ms(p.Name), 4)
		byRole[p.Role] += ms(p.Name)
	}
	// The server's parts, beside its total (a backend that exits moves
	// from "backends" to "postmaster").
	for name := range after.ticks {
		if strings.HasPrefix(name, "postgres/") {
			c.ByProcess[name] = round(ms(name), 4)
		}
	}
	c.API, c.Worker, c.Postgres, c.Redis = round(byRole["api"], 4), round(byRole["worker"], 4), round(byRole["postgres"], 4), round(byRole["redis"], 4)
	c.Localnet, c.Client = round(byRole["localnet"], 4), round(byRole["client"], 4)
	c.Service = round(byRole["api"]+byRole["worker"]+byRole["postgres"]+byRole["redis"], 4)
	return c
}

// round keeps digits decimals, for readable JSON.
func round(v float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}

// loadAvg is /proc/loadavg's first three figures: the machine's load
// while a benchmark ran, which its figures move with.
func loadAvg() string {
	raw, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(raw))
	return strings.Join(f[:min(3, len(f))], " ")
}

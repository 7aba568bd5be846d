package chaintest

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/solana"
)

// The syscall keys are murmur3 of the names (solana-sbpf's
// doc/syscalls.md gives sol_log_'s).
func TestSyscallHash(t *testing.T) {
	if got := syscallHash("sol_log_"); got != 544561597 {
		t.Fatalf("sol_log_: %d", got)
	}
}

// The forwarder refuses what it cannot forward, with its own error
// codes: an account twice in its instruction (it keeps no copy of an
// earlier one), and an instruction without accounts (no program to
// invoke).
func TestForwarderRefuses(t *testing.T) {
	t.Parallel()
	ln := localnettest.Shared(t)
	DeployForwarder(t, ln)
	p := NewPayer(t, ln, 1_000_000, solana.LamportsPerSOL)
	transfer := []byte{3, 1, 0, 0, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name string
		ix   sol.Instruction
		code int
	}{
		{"duplicate", sol.NewInstruction(ForwarderProgramID, sol.AccountMetaSlice{
			sol.Meta(p.USDCAccount()).WRITE(), sol.Meta(p.USDCAccount()).WRITE(), sol.Meta(p.PublicKey()).SIGNER(), sol.Meta(sol.TokenProgramID),
		}, transfer), forwarderErrDuplicate},
		{"no accounts", sol.NewInstruction(ForwarderProgramID, nil, transfer), forwarderErrAccounts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bh struct {
				Value struct {
					Blockhash sol.Hash `json:"blockhash"`
				} `json:"value"`
			}
			ln.Call(t, &bh, "getLatestBlockhash")
			raw := p.sign(t, tc.name, []sol.Instruction{tc.ix}, bh.Value.Blockhash)
			var sim struct {
				Value struct {
					Err  json.RawMessage `json:"err"`
					Logs []string        `json:"logs"`
				} `json:"value"`
			}
			ln.Call(t, &sim, "simulateTransaction", base64.StdEncoding.EncodeToString(raw), map[string]any{"encoding": "base64"})
			want := `{"InstructionError":[0,{"Custom":` + strconv.Itoa(tc.code) + `}]}`
			if string(sim.Value.Err) != want {
				t.Fatalf("err %s, want %s\n%s", sim.Value.Err, want, strings.Join(sim.Value.Logs, "\n"))
			}
		})
	}
}

package payment

import "context"

// Rebroadcast runs the sweep's re-broadcast of ts (rows as a sweep read
// them, perhaps before a refusal) on network's node.
func (e *Engine) Rebroadcast(ctx context.Context, ts []Transaction) SweepStats {
	var st SweepStats
	for _, t := range ts {
		e.rebroadcast(ctx, e.Nodes[t.Network], []Transaction{t}, &st)
	}
	return st
}

// SetCrashPoint makes the re-sign path call f at each of its steps.
func SetCrashPoint(f func(step string)) { crashPoint = f }

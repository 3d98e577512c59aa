package probe

import (
	"fmt"
)

// maxClears bounds the exits of an expansion marked so.
const maxClears = 16

// markStarts places an expansion whose starts one call may pass more than
// once: each start with a mark, and a clear at each exit of the calls'
// region (see markExits). ok is false when the exits are more than
// maxClears.
func (ip *inlinePlacer) markStarts(fl *flow, rs [][2]uint64, starts []uint64) ([]start, bool) {
	exits := fl.markExits(rs, starts)
	if len(exits) > maxClears {
		return nil, false
	}
	note := fmt.Sprintf("one call may pass several of the %d starts: a per-thread mark counts it once (cleared at %d exits)", len(starts), len(exits))
	var out []start
	for _, s := range starts {
		m := ip.frames.mark(s)
		m.Start, m.Clear = true, contains(exits, s)
		out = append(out, start{addr: s, copies: true, mark: m, note: note})
	}
	for _, y := range exits {
		if !contains(starts, y) {
			m := ip.frames.mark(y)
			m.Clear = true
			out = append(out, start{addr: y, mark: m})
		}
	}
	return out, true
}

// markExits are the exits of the region of calls that enter at starts: the
// instructions from which no start can be reached within an iteration of
// the caller's loops around the starts, entered from one from which a start
// can be, or from a start. Every path from a start to the next call passes
// one (the loop's back edge, or the function's return, is past one), and
// none passes one between two starts of the same call: past an exit, no
// start follows until the next iteration.
func (fl *flow) markExits(rs [][2]uint64, starts []uint64) []uint64 {
	d := fl.dominators()
	var loops []*loop
	seen := map[*loop]bool{}
	isStart := map[uint64]bool{}
	for _, s := range starts {
		isStart[s] = true
		for _, l := range fl.callerLoops(s, rs) {
			if !seen[l] {
				seen[l] = true
				loops = append(loops, l)
			}
		}
	}
	// reach: a start can follow, within the iteration.
	reach := map[uint64]bool{}
	work := append([]uint64(nil), starts...)
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range fl.pred[x] {
			if !reach[p] && !d.backEdge(p, x, loops) {
				reach[p] = true
				work = append(work, p)
			}
		}
	}
	var exits []uint64
	for _, y := range fl.addrs {
		if reach[y] {
			continue
		}
		for _, p := range fl.pred[y] {
			if (reach[p] || isStart[p]) && !d.backEdge(p, y, loops) {
				exits = append(exits, y)
				break
			}
		}
	}
	exits = append(exits, fl.startLatches(rs, starts, exits)...)
	return append(exits, fl.afterEffects(rs, starts, loops, exits)...)
}

// afterEffects are the instructions of the caller, not in exits already,
// that control reaches from the body's code after an effect of the body
// (see effect) on the way from a start, within an iteration: the call has
// done what it does and returned to its caller. gcc -O2 seed 2260 turns
// fn04's loop of two guarded fn05 calls into two loops, one per side of
// the guard, which it tests at the bottom of the heavy side's loop: the
// next call's start (the test) followed the previous call's .part call
// within one iteration, with no exit between, and its mark kept 39 of 58
// calls from counting.
func (fl *flow) afterEffects(rs [][2]uint64, starts []uint64, loops []*loop, exits []uint64) []uint64 {
	d := fl.dominators()
	done := map[uint64]bool{} // reached from a start past an effect
	work := []uint64{}
	seen := map[uint64]bool{}
	for _, s := range starts {
		seen[s] = true
		work = append(work, s)
	}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		past := done[x] || holds(rs, x) && effect(fl.op[x])
		for _, y := range fl.succ[x] {
			if d.backEdge(x, y, loops) || !holds(rs, x) && !holds(rs, y) {
				continue
			}
			if past && !done[y] {
				done[y] = true
				work = append(work, y)
			} else if !seen[y] {
				seen[y] = true
				work = append(work, y)
			}
		}
	}
	var out []uint64
	for _, y := range fl.addrs {
		if holds(rs, y) || contains(exits, y) {
			continue
		}
		for _, p := range fl.pred[y] {
			if holds(rs, p) && (done[p] || effect(fl.op[p])) && !d.backEdge(p, y, loops) {
				out = append(out, y)
				break
			}
		}
	}
	return out
}

// startLatches are the latches of the caller's loops around a start whose
// body holds no other start, not in exits already: each iteration makes
// one call at most, so the mark goes on the way back to the head (or out
// of the loop), where the iteration's call is over. clang -O2
// seed 1357 copies a loop of three calls and one DIE holds both copies,
// the second reachable from the first: no exit lay between the iterations
// of the first, and two calls of three went uncounted.
func (fl *flow) startLatches(rs [][2]uint64, starts, exits []uint64) []uint64 {
	d := fl.dominators()
	var out []uint64
	for _, s := range starts {
		for _, l := range fl.callerLoops(s, rs) {
			alone := true
			for _, o := range starts {
				if i, ok := d.idx[o]; ok && o != s && l.body[i] {
					alone = false
				}
			}
			for _, u := range l.latches {
				if a := d.addr[u]; alone && !holds(rs, a) && !contains(exits, a) && !contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

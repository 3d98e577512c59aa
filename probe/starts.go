package probe

import (
	"maps"
	"slices"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/types"
)

// callStarts keeps, of the entries es of the expansion whose ranges are rs,
// those where calls begin: each call passes one of them first.
//
//   - An entry is a start when control can reach it from the instance's
//     entry, or from the head of a caller's loop around it (where each
//     iteration begins), without passing another entry first. An entry
//     reached only through another is where the same call goes on after
//     code of the caller that LLVM interleaved with the body.
//   - Hoisted code goes: a few register loads Go reloads in a loop before
//     the call (see dropHoisted), before anything else; and a start of
//     code of the body the compiler moved out of a caller's loop, which
//     runs once before the loop's calls, which enter at a start inside it
//     (one that every path from the hoisted code reaches).
//   - A start from which no path reaches an effect of the body (a store
//     outside the frame, a call) within the iteration goes, when another
//     start's does: a register reload of the body that LLVM left on a path
//     that skips the call, an instruction Go shared between two calls.
//   - A start that another start post-dominates within the iteration
//     (every path from it reaches the other before the iteration ends or
//     the function returns) is the same call as the later one, which
//     every call passes: the earlier one goes.
func (fl *flow) callStarts(es []uint64, rs [][2]uint64) []uint64 {
	es = fl.dropHoisted(es, rs)
	es = fl.dropOvertaken(es, rs)
	avoid := map[uint64]bool{}
	for _, e := range es {
		avoid[e] = true
	}
	var starts []uint64
	for _, e := range es {
		loops := fl.callerLoops(e, rs)
		heads := []uint64{fl.entry}
		d := fl.dominators()
		for _, l := range loops {
			heads = append(heads, d.addr[l.header])
		}
		for _, h := range heads {
			if h == e || !(avoid[h] && h != e) && fl.reachFirst(h, e, avoid) {
				starts = append(starts, e)
				break
			}
		}
	}
	if len(starts) < 2 {
		return starts
	}
	starts = fl.dropOrphans(starts, rs)
	drop := func(keep func(a, b uint64) bool) {
		for changed := true; changed && len(starts) > 1; {
			changed = false
			for i, a := range starts {
				for j, b := range starts {
					if i != j && !keep(a, b) {
						starts = append(starts[:i:i], starts[i+1:]...)
						changed = true
						break
					}
				}
				if changed {
					break
				}
			}
		}
	}
	// Hoisted: b follows a on every path, in a caller's loop a is not in.
	drop(func(a, b uint64) bool { return !(fl.postDominates(b, a) && fl.outside(a, b, rs)) })
	// The same call: b follows a on every path within the iteration.
	drop(func(a, b uint64) bool { return !fl.postDominatesIn(b, a, fl.callerLoops(a, rs)) })
	return starts
}

// dropOvertaken drops the entries that begin a piece of the body the
// compiler scheduled ahead of what others do before the call: a piece
// without effects (see effectFree) from which every path comes back into
// rs at another entry within the same iterations of the caller's loops,
// and on the way runs code outside rs that has an effect (a store outside
// the frame, a call: the caller's own, or another call's body). The call
// is made where control comes back: its effects, and so its place among
// the calls, follow that code. cmd/compile moves the body's first
// arithmetic of a call ahead of the call before it: go seed 2312 gives
// the call at main.go:197 fn12's `int64(a)` and `a+b+c` at 0x4a23fb, ahead
// of the call at line 196, whose record is written from 0x4a2408 on, and
// comes back to line 197's call at 0x4a2499; a probe at 0x4a23fb fired
// before line 196's call, every time. Go also gives an instruction two
// calls share to the later call in DWARF (go seed 2273: the movslq at
// 0x4a21e8 of both calls at lines 168 and 169 is line 169's).
func (fl *flow) dropOvertaken(es []uint64, rs [][2]uint64) []uint64 {
	if len(es) < 2 {
		return es
	}
	d := fl.dominators()
	var out []uint64
	for _, e := range es {
		overtaken := false
		if fl.effectFree(e, rs) {
			loops := fl.callerLoops(e, rs)
			for _, o := range es {
				if o == e || !fl.sameLoops(e, o, rs) || !fl.postDominatesIn(o, e, loops) {
					continue
				}
				follow := func(from, to uint64) bool { return to != o && !d.backEdge(from, to, loops) }
				if fl.search(e, follow, func(y uint64) bool { return !holds(rs, y) && effect(fl.op[y]) }) {
					overtaken = true
					break
				}
			}
		}
		if !overtaken {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return es
	}
	return out
}

// dropOrphans drops the starts from which no path reaches an effect of
// the body within an iteration before it passes another start, when some
// start's path does (see callStarts): the effects past another start are
// its call's (gcc -O2 seed 2786: a spill GCC hoisted out of main's loop
// and gave fn08's scope, from which the path goes on to the loop's
// conditional call of fn08).
func (fl *flow) dropOrphans(starts []uint64, rs [][2]uint64) []uint64 {
	var out []uint64
	for _, s := range starts {
		others := map[uint64]bool{}
		for _, o := range starts {
			others[o] = o != s
		}
		if fl.reachesEffect(s, rs, others) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return starts
	}
	return out
}

// reachesEffect reports whether control can go from s to a store outside
// the frame or a call of the code of rs, within an iteration of the
// caller's loops around s, without passing any of avoid.
func (fl *flow) reachesEffect(s uint64, rs [][2]uint64, avoid map[uint64]bool) bool {
	d := fl.dominators()
	loops := fl.callerLoops(s, rs)
	hit := func(x uint64) bool { return holds(rs, x) && effect(fl.op[x]) }
	return hit(s) || fl.search(s, func(from, to uint64) bool { return !avoid[to] && !d.backEdge(from, to, loops) }, hit)
}

// effect reports whether in is seen outside the frame: a store to memory
// not addressed from the stack or frame pointer, or a call.
func effect(in x86asm.Inst) bool {
	if in.Op == x86asm.CALL {
		return true
	}
	mem, st := storeTo(in)
	return st && mem.Base != x86asm.RSP && mem.Base != x86asm.RBP && mem.Base != x86asm.ESP
}

// overlap reports two starts of which one call may pass both: control can
// go from the first to the second within an iteration of the caller's
// loops around the first.
func (fl *flow) overlap(starts []uint64, rs [][2]uint64) (a, b uint64, ok bool) {
	for _, x := range starts {
		loops := fl.callerLoops(x, rs)
		for _, y := range starts {
			if x != y && fl.reachIn(x, y, loops) {
				return x, y, true
			}
		}
	}
	return 0, 0, false
}

// goMarked chooses, of several starts of a Go expansion, the one in the
// same call as the call's inline mark (see code.Model.InlineMark): in the
// same caller's loops, and either every path to the mark passes it and
// every path from it reaches the mark within the iteration, or the other
// way round. cmd/compile shares an instruction between two inlined calls
// and gives it to one of them in DWARF, and reloads an argument in the
// caller's loop: starts that are no call of their own. The mark is an
// instruction with the call site's position, which the compiler may take
// from a loop before the call or from one branch only (an argument's
// reload): it is used only to choose, and only a start it agrees with.
func (ip *inlinePlacer) goMarked(site *types.InlineSite, fl *flow, starts []uint64) ([]start, bool) {
	m := ip.t.codeModel()
	if len(starts) < 2 || m == nil {
		return nil, false
	}
	mk, ok := m.InlineMark(site)
	rs := site.Ranges
	if !ok || !fl.has(mk) || fl.inOwnLoop(mk, rs) {
		return nil, false
	}
	for _, e := range starts {
		if fl.inOwnLoop(e, rs) || !fl.sameLoops(e, mk, rs) {
			continue
		}
		loops := fl.callerLoops(e, rs)
		if fl.dominates(e, mk) && fl.postDominatesIn(mk, e, loops) || fl.dominates(mk, e) && fl.postDominatesIn(e, mk, loops) {
			return []start{{addr: e}}, true
		}
	}
	return nil, false
}

// outside reports whether a caller's loop around b does not hold a.
func (fl *flow) outside(a, b uint64, rs [][2]uint64) bool {
	d := fl.dominators()
	i, ok := d.idx[a]
	if !ok {
		return false
	}
	for _, l := range fl.callerLoops(b, rs) {
		if !l.body[i] {
			return true
		}
	}
	return false
}

// sameLoops reports whether the caller's loops around x and y are the same.
func (fl *flow) sameLoops(x, y uint64, rs [][2]uint64) bool {
	lx, ly := fl.callerLoops(x, rs), fl.callerLoops(y, rs)
	if len(lx) != len(ly) {
		return false
	}
	for _, l := range lx {
		found := false
		for _, k := range ly {
			found = found || k == l
		}
		if !found {
			return false
		}
	}
	return true
}

// inOwnLoop reports whether x is in a loop of the expansion's own code
// (see ownLoop).
func (fl *flow) inOwnLoop(x uint64, rs [][2]uint64) bool {
	d := fl.dominators()
	i, ok := d.idx[x]
	if !ok {
		return false
	}
	for _, l := range d.loops {
		if l.body[i] && fl.ownLoop(l, rs) {
			return true
		}
	}
	return false
}

// apart are the entries es of the expansion whose code is rs that calls
// pass instead of starts, not as well: GCC's entry_pc is on one path of
// a body only where it threaded a jump into another. gcc -O3 seed 1420
// inlines two calls of a guarded fn03 with the same argument; where the
// first took the early return, the second's guard is known, and GCC jumps
// from the first's return straight to the second's record, its entry_pc
// being the call of fn03.part.0 of the other path. An entry is kept when
// it leads to an effect of the body before another entry (see
// reachesEffect: gcc -O3 seed 3223 gives fn09's scope to code hoisted
// out of a loop of calls, an entry before the loop's), no start reaches
// it nor it a start within an iteration of the caller's loops, and no
// other such entry reaches it: the first of a call's entries. Where two
// kept ones may both run in one call, none is.
func (fl *flow) apart(es, starts []uint64, rs [][2]uint64) []uint64 {
	var cand []uint64
	for _, e := range es {
		others := map[uint64]bool{}
		for _, o := range es {
			others[o] = o != e
		}
		if contains(starts, e) || !fl.reachesEffect(e, rs, others) {
			continue
		}
		ok := true
		for _, s := range starts {
			ok = ok && !fl.reachIn(e, s, fl.callerLoops(e, rs)) && !fl.reachIn(s, e, fl.callerLoops(s, rs))
		}
		if ok {
			cand = append(cand, e)
		}
	}
	var out []uint64
	for _, e := range cand {
		first := true
		for _, o := range cand {
			first = first && (o == e || !fl.reachIn(o, e, fl.callerLoops(o, rs)))
		}
		if first {
			out = append(out, e)
		}
	}
	if _, _, over := fl.overlap(out, rs); over {
		return nil
	}
	return out
}

// moveToJoins moves the rows of decl from which control goes on, through
// instructions of one successor each and no effect (as handsOn follows
// it), to an instruction of rs that code outside rs also reaches, to that
// join, and pts with them; it returns pts. GCC gives the declaration's row
// to a jump into the body past its head on one path only (gcc -O2 seed
// 1454: a guard known false after another guarded call's, the path through
// that call's conditional call jumps into the body, the other falls into
// it): both paths' calls start at the join. A move that would let one
// call pass two rows is not made.
func (fl *flow) moveToJoins(decl map[uint64]bool, pts []uint64, rs [][2]uint64) []uint64 {
	const maxChain = 16
	rows := make([]uint64, 0, len(decl))
	for a := range decl {
		rows = append(rows, a)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i] < rows[j] })
	for _, a := range rows {
		x := a
		for i := 0; i < maxChain && !effect(fl.op[x]) && len(fl.succ[x]) == 1; i++ {
			y := fl.succ[x][0]
			if decl[y] || !holds(rs, y) {
				break
			}
			if !fl.enteredBesides(y, x, rs) {
				x = y
				continue
			}
			moved := []uint64{y}
			for b := range decl {
				if b != a {
					moved = append(moved, b)
				}
			}
			if _, _, over := fl.overlap(moved, rs); !over {
				delete(decl, a)
				decl[y] = true
				for k := range pts {
					if pts[k] == a {
						pts[k] = y
					}
				}
			}
			break
		}
	}
	return pts
}

// enteredBesides reports whether control reaches y from code outside rs
// other than x.
func (fl *flow) enteredBesides(y, x uint64, rs [][2]uint64) bool {
	for _, p := range fl.pred[y] {
		if p != x && !holds(rs, p) {
			return true
		}
	}
	return false
}

// pastTests moves each start x of starts from which control goes on to
// another start through tests and jumps alone (see decides) past them: to
// the instructions those tests lead to other than starts, where x's calls
// that do not go on to the other start go. A call that goes from x to
// another start has done nothing in between but decide its way: it is the
// other start's call, and a start at x too counted it twice. gcc -O3 seed
// 4025 unswitches fn10's loop of two guarded fn11 calls on the guard: the
// heavy loop's copy of the body starts at 0x1d4e with the guard's test,
// whose early return jumps to the light loop's copy at 0x1f5a, each of
// them marked with a row of fn11's declaration line; the first light call
// passed both. Where another start's tests and jumps also lead to an
// instruction x moves to, that start moves with it (past its own tests):
// gcc -O2 seed 4503 marks fn05's guard test at 0x13d7, whose early return
// jumps to the start 0x11af, and a jump-threaded path's `jmp 0x13e1` at
// 0x14d4 into the same heavy path; both start at 0x13e1. A start whose
// tests lead to a later call (see leadsOn) stays. ok is false when a start
// would move out of rs, to an instruction that code other than the starts'
// tests also reaches, or with one that stays.
func (fl *flow) pastTests(starts []uint64, rs [][2]uint64) (out []uint64, ok bool) {
	type decided struct {
		tests map[uint64]bool
		to    []uint64
	}
	ds := make([]decided, len(starts))
	var work []int
	moved, stay := map[int]bool{}, map[int]bool{}
	for i, x := range starts {
		others := map[uint64]bool{}
		for _, o := range starts {
			others[o] = o != x
		}
		tests, to, hits := fl.decides(x, others)
		ds[i] = decided{tests, to}
		switch {
		case len(hits) == 0:
		case fl.leadsOn(to, hits, fl.callerLoops(x, rs), rs):
			stay[i] = true
		default:
			moved[i] = true
			work = append(work, i)
		}
	}
	if len(work) == 0 {
		return starts, true
	}
	// testOf is the start whose tests p is one of (-1: none).
	testOf := func(p uint64) int {
		for i, d := range ds {
			if d.tests[p] {
				return i
			}
		}
		return -1
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for _, z := range ds[i].to {
			if !holds(rs, z) {
				return starts, false
			}
			for _, p := range fl.pred[z] {
				k := testOf(p)
				if k < 0 || ds[k].to == nil || stay[k] {
					return starts, false
				}
				if !moved[k] {
					moved[k] = true
					work = append(work, k)
				}
			}
		}
	}
	for i, x := range starts {
		if !moved[i] {
			out = append(out, x)
			continue
		}
		for _, z := range ds[i].to {
			if !contains(out, z) {
				out = append(out, z)
			}
		}
	}
	return out, true
}

// leadsOn reports whether control goes from one of to on to one of ys
// within an iteration of loops, through code of rs and code that does
// nothing a call is seen by (see effect): ys are then the later calls
// right after x's, which x's calls that go to them straight from its tests
// pass too, having done nothing but test (`if (!p) return;` unrolled, the
// first copy's test jumping to the second's). A path through the caller's
// other calls and records is none: it may be a way round the caller's loop
// that is no back edge to its head (a call of exit falls through in the
// flow) and leads to the same call's other path.
func (fl *flow) leadsOn(to, ys []uint64, loops []*loop, rs [][2]uint64) bool {
	d := fl.dominators()
	follow := func(from, to uint64) bool {
		return !d.backEdge(from, to, loops) && (holds(rs, to) || !effect(fl.op[to]))
	}
	for _, z := range to {
		if fl.search(z, follow, func(y uint64) bool { return contains(ys, y) }) {
			return true
		}
	}
	return false
}

// decides follows the tests and jumps from x (see testOnly) that only
// they reach (x aside), not into others: hits are the ones of others they
// reach, to the other instructions they lead to.
func (fl *flow) decides(x uint64, others map[uint64]bool) (tests map[uint64]bool, to, hits []uint64) {
	const maxTests = 8
	tests = map[uint64]bool{}
	work := []uint64{x}
	for len(work) > 0 && len(tests) <= maxTests {
		a := work[len(work)-1]
		work = work[:len(work)-1]
		if tests[a] || !testOnly(fl.op[a]) || a != x && !fl.onlyFrom(a, tests) {
			if !contains(to, a) {
				to = append(to, a)
			}
			continue
		}
		tests[a] = true
		for _, y := range fl.succ[a] {
			if others[y] {
				if !contains(hits, y) {
					hits = append(hits, y)
				}
			} else if !tests[y] {
				work = append(work, y)
			}
		}
	}
	if len(tests) > maxTests {
		return tests, nil, nil
	}
	var out []uint64
	for _, a := range to {
		if !tests[a] {
			out = append(out, a)
		}
	}
	return tests, out, hits
}

// onlyFrom reports whether every predecessor of a is in set.
func (fl *flow) onlyFrom(a uint64, set map[uint64]bool) bool {
	for _, p := range fl.pred[a] {
		if !set[p] {
			return false
		}
	}
	return true
}

// testOnly reports whether in changes nothing but the flags and where
// control goes: a compare, a test, a direct jump.
func testOnly(in x86asm.Inst) bool {
	switch in.Op {
	case x86asm.CMP, x86asm.TEST, x86asm.NOP:
		return true
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return false
	}
	if !isBranch(in.Op) {
		return false
	}
	_, direct := in.Args[0].(x86asm.Rel)
	return direct
}

// apartCopies are the further calls on the paths of apart entries (see
// apart) that GCC marks with a row of the callee's declaration line, as
// it marks each copy of an unrolled loop's body: where such an entry is
// itself a row of decl, the other rows of decl it dominates and reaches
// within an iteration of the caller's loops, that no other start
// reaches and that a start does not run on to with no effect between
// (see quietFrom, handsOn). gcc -O3 seed 4546 unswitches fn03's 3-trip
// loop of `fn07(c*3+1)` on fn07's guard: the guard-true path is three
// straight copies of the early return's record, at 0x1a88, 0x1aca and
// 0x1b0c, each after a row of line 58, fn07's declaration, under the
// one DIE whose entry_pc is the other path's loop.
func (fl *flow) apartCopies(decl map[uint64]bool, apart, starts []uint64, rs [][2]uint64) []uint64 {
	for _, a := range fl.handsOn(decl) {
		delete(decl, a)
	}
	var from []uint64
	for _, e := range apart {
		if decl[e] {
			from = append(from, e)
		}
	}
	if len(from) == 0 {
		return nil
	}
	var out []uint64
	for _, r := range slices.Sorted(maps.Keys(decl)) {
		if contains(starts, r) || fl.quietFrom(starts, r) {
			continue
		}
		copied, other := false, false
		for _, s := range starts {
			hit := fl.reachIn(s, r, fl.callerLoops(s, rs))
			if contains(from, s) {
				copied = copied || hit && fl.dominates(s, r)
			} else {
				other = other || hit
			}
		}
		if copied && !other {
			out = append(out, r)
		}
	}
	return out
}

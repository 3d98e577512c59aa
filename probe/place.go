package probe

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// inlinePlacer finds where the calls of an inline expansion start
// (inlineStarts): from the control flow of the instance that holds it
// (callEntries, unrolledStarts, gnuStarts), the stores that tell its
// calls apart (anchors: anchor.go), Go's inline marks (goMarked:
// starts.go), per-thread marks (markStarts: mark.go); and which
// expansions are no call of their own (piece, merged, lineless: piece.go).
type inlinePlacer struct {
	t      *target // the DWARF and the model of code
	frames *frameTable
	flows  *flowIndex
}

// start is one place where calls of an inline expansion begin: a probe on
// it fires once per call that enters the expansion there.
type start struct {
	addr uint64
	// copies is set when the expansion's DIE holds several calls (an
	// unrolled loop's copies of the body): one location description
	// then speaks for all of them, and a constant in it is not to be
	// trusted for any one call.
	copies bool
	note   string
	// mark, when set, is the start's mark (see Mark), or a clear: a
	// place that counts nothing, where the calls' mark goes.
	mark *spec.Mark
}

// inlineStarts are the places where calls of fn enter the expansion site,
// chosen from the control flow of the instance holding it so that every
// call passes exactly one of them:
//
//   - The entries of the expansion are the instructions of its ranges that
//     control reaches from outside them (not its lowest address: clang and
//     LLVM give no DW_AT_entry_pc, and their lowest range may start with
//     an alignment pad no call runs, or with an instruction reached only
//     from inside). Where GCC gives DW_AT_entry_pc, that is the entry,
//     with the entries of paths no call through it passes (see apart).
//   - Of LLVM's and Go's entries, the starts are those a call can pass
//     first, hoisted and effect-free pieces left out (see callStarts); Go's
//     inline mark chooses among several (see goMarked).
//   - One DIE can hold several calls: a loop unrolled around the call
//     copies the body. Where the compiler marks the entry with a row of
//     the callee's declaration line (GCC), every such row in the
//     expansion's own code starts a copy, and each is a start. Where a
//     store the body makes once per call repeats within an iteration of
//     the caller's loops (LLVM's copies, apart, end to end or merged, and
//     GCC's head of a body duplicated into the cold path before it), the
//     calls are counted at those stores (see anchors); so too where one
//     call may pass two starts.
//   - Where one call may pass two starts and no store tells the calls
//     apart, a per-thread mark counts each call once (see Mark); where
//     its exits are too many, one start is kept, with a note that calls
//     entering elsewhere are missed.
//
// Without a model of the host (no debug info, another architecture), the
// start is the DIE's entry address, as before.
func (ip *inlinePlacer) inlineStarts(fn *types.Func, site *types.InlineSite) []start {
	inst := ip.flows.hostOf(site)
	if inst == nil {
		return []start{{addr: site.EntryPC}}
	}
	fl, err := ip.flows.of(inst)
	if err != nil || !fl.has(site.EntryPC) && holds(site.Ranges, site.EntryPC) {
		return []start{{addr: site.EntryPC}}
	}
	pts := []uint64{site.EntryPC}
	merged := false
	gnu := ip.flows.gnuAt(site.EntryPC) && (holds(site.Ranges, site.EntryPC) || fl.entryView(site))
	if !gnu {
		var out []start
		var done bool
		if pts, merged, out, done = ip.callEntries(site, inst, fl); done {
			return out
		}
	}
	out := ip.unrolledStarts(fn, site, inst, fl, pts)
	if merged {
		for i := range out {
			out[i].copies = true
		}
	}
	if gnu {
		return ip.gnuStarts(fn, site, inst, fl, out)
	}
	return out
}

// entryView reports whether GCC's entry_pc of site is an instruction of
// fl that the DIE gives an empty range and no other range holds: GCC names
// the view where the calls enter, past code it gave the expansion but
// scheduled ahead of the call, on paths that do not make it. gcc -O2 seed
// 3951 inlines two fn10 calls into fn09, `if (a & 1) r += fn10(a+a);`
// then `r += fn10(a^97);`, and merges their record counters' loads and
// increments into one, hoisted above the `a & 1` test and given to the
// first call's DIE (0x1753): every fn09 call ran it, the first call only
// the odd ones, from its entry_pc 0x17c0 on (the range [0x17c0,0x17c0)).
func (fl *flow) entryView(site *types.InlineSite) bool {
	if !fl.has(site.EntryPC) {
		return false
	}
	return emptyAt(site.Ranges, site.EntryPC)
}

// callEntries are the ways into the expansion from the code around it
// (see callStarts), merged when there are several (they may as well be
// several calls the DIE describes at once: LLVM's unrolled copies, whose
// constant location holds for one of them only). done is set when the
// starts are already known, in out: from Go's marks, from stores
// (anchors), or from overlapping calls.
func (ip *inlinePlacer) callEntries(site *types.InlineSite, inst *types.Instance, fl *flow) (pts []uint64, merged bool, out []start, done bool) {
	rs := site.Ranges
	raw := fl.entries(rs, ip.flows.neutral(inst, fl))
	if ip.flows.gnuAt(site.EntryPC) {
		raw = fl.notBodyLoops(raw, rs)
	}
	pts = fl.callStarts(raw, rs)
	if len(pts) == 0 {
		return nil, false, []start{{addr: site.EntryPC}}, true
	}
	merged = len(raw) > 1
	if out, ok := ip.goMarked(site, fl, pts); ok {
		return nil, false, out, true
	}
	a, b, over := fl.overlap(pts, rs)
	if as, copies, ok := ip.anchors(site, inst, fl, pts, false, nil); ok && (copies || over) {
		return nil, false, anchorStarts(as), true
	}
	if over {
		if out, ok := ip.anchorsByLoops(site, inst, fl, pts); ok {
			return nil, false, out, true
		}
	}
	if !over && len(pts) > 1 {
		if out, ok := ip.anchorsEach(site, inst, fl, pts); ok {
			return nil, false, out, true
		}
	}
	if over {
		return nil, false, ip.overlapping(fl, rs, pts, a, b), true
	}
	return pts, merged, nil, false
}

// unrolledStarts are the starts pts, and more where the body's code was
// copied by unrolling a loop: the rows of the declaration's line where
// they mark a start and are several, else the copies of each start
// (which then all have copies set).
func (ip *inlinePlacer) unrolledStarts(fn *types.Func, site *types.InlineSite, inst *types.Instance, fl *flow, pts []uint64) []start {
	decl := ip.declRows(fn, site, inst, fl)
	for _, a := range fl.handsOn(decl) {
		delete(decl, a)
	}
	pts = fl.moveToJoins(decl, pts, site.Ranges)
	// A start at an entry_pc outside the ranges (see entryView) is marked
	// by the row the code at it leads to (see declRows).
	marked := false
	for _, p := range pts {
		in, ok := fl.intoRanges(p, site.Ranges)
		marked = marked || decl[p] || !holds(site.Ranges, p) && ok && decl[in]
	}
	out := make([]start, 0, len(pts))
	for _, p := range pts {
		out = append(out, start{addr: p})
	}
	own := func(a uint64) bool {
		ex := ip.t.codeModel().Expansions(a)
		return len(ex) > 0 && ex[0] == site
	}
	split := false
	if marked && len(decl) > 1 {
		split = true
		var more []uint64
		for _, a := range slices.Sorted(maps.Keys(decl)) {
			if !contains(pts, a) && !fl.quietFrom(pts, a) {
				more = append(more, a)
			}
		}
		all := append(append([]uint64(nil), pts...), more...)
		if moved, ok := fl.pastTests(all, site.Ranges); ok {
			all = moved
		}
		out = out[:0]
		for _, a := range all {
			out = append(out, start{addr: a})
		}
	} else if !marked {
		for _, p := range pts {
			for _, c := range fl.copies(p, own) {
				if !contains(pts, c) {
					out = append(out, start{addr: c})
					split = true
				}
			}
		}
	}
	if split {
		for i := range out {
			out[i].copies = true
			out[i].note = fmt.Sprintf("copy %d of %d of an unrolled loop's body", i+1, len(out))
		}
	}
	return out
}

// quietFrom reports whether control goes from one of pts to a through
// instructions of one successor each and no effect (as handsOn follows
// it), and every path to a passes it: a row of the declaration's line
// there is the same call's. GCC
// gives the row to the second piece of a call whose first piece sets up
// its arguments, a caller's instruction between them (gcc -O3 seed 3500:
// fn12's call in fn01's loop on the odd path enters at 0x2023 and has
// the row at 0x202c, three instructions on): a start there too counts the
// call twice.
func (fl *flow) quietFrom(pts []uint64, a uint64) bool {
	const maxChain = 16
	for _, p := range pts {
		x := p
		for i := 0; i < maxChain && !effect(fl.op[x]) && len(fl.succ[x]) == 1; i++ {
			if x = fl.succ[x][0]; x == a {
				return fl.dominates(p, a) // no other way to a
			}
		}
	}
	return false
}

// gnuStarts are the starts out of a body GCC entered at its entry_pc,
// told apart by stores where GCC duplicated the head of a body in a loop
// into the end of the previous call's cold path (which jumps into the
// body past its entry): the entry and the declaration's rows do not tell
// those calls apart. The body's own stores only: a nested expansion's may
// be in a loop of the body that GCC unrolled, several per call, with no
// loop left to show it.
func (ip *inlinePlacer) gnuStarts(fn *types.Func, site *types.InlineSite, inst *types.Instance, fl *flow, out []start) []start {
	rs := site.Ranges
	var starts []uint64
	for _, o := range out {
		starts = append(starts, o.addr)
	}
	apart := fl.apart(fl.notBodyLoops(fl.entries(rs, ip.flows.neutral(inst, fl)), rs), starts, rs)
	for _, e := range apart {
		starts = append(starts, e)
		out = append(out, start{addr: e, note: "an entry no call through the entry_pc passes, nor the other way round (a path of the body GCC jump-threaded)"})
	}
	if more := fl.apartCopies(ip.declRows(fn, site, inst, fl), apart, starts, rs); len(more) > 0 {
		n := len(out) - len(apart)
		for i := range out[n:] {
			out[n+i].copies = true
		}
		for _, a := range more {
			starts = append(starts, a)
			out = append(out, start{addr: a, copies: true, note: "a further copy of the body on a path GCC jump-threaded, marked by a row of the declaration's line"})
		}
	}
	if as, copies, ok := ip.anchors(site, inst, fl, starts, true, nil); ok && copies && len(as) > len(out) {
		return anchorStarts(as)
	}
	// A copy of a caller's loop that enters the body elsewhere than at a
	// start (see uncovered): its calls start at its head, and the first
	// may come through a start too.
	own := func(a uint64) bool {
		ex := ip.t.codeModel().Expansions(a)
		return len(ex) > 0 && ex[0] == site
	}
	if more := fl.uncovered(rs, starts, own); len(more) > 0 {
		starts = append(starts, more...)
		if as, copies, ok := ip.anchors(site, inst, fl, starts, false, nil); ok && copies {
			return anchorStarts(as)
		}
		if a, b, over := fl.overlap(starts, rs); over {
			return ip.overlapping(fl, rs, starts, a, b)
		}
		for _, m := range more {
			out = append(out, start{addr: m, copies: true})
		}
	}
	return out
}

// overlapping places an expansion whose starts pts one call may pass two of
// (a and b): never count it twice. A mark tells in each thread and frame
// whether the call was counted; where its exits are too many, one start is
// kept, the one that dominates the others where one does, with a note that
// calls entering elsewhere are not seen.
func (ip *inlinePlacer) overlapping(fl *flow, rs [][2]uint64, pts []uint64, a, b uint64) []start {
	if out, ok := ip.markStarts(fl, rs, pts); ok {
		return out
	}
	keep := pts[0]
	for _, p := range pts {
		all := true
		for _, q := range pts {
			all = all && (p == q || fl.dominates(p, q))
		}
		if all {
			keep = p
		}
	}
	return []start{{addr: keep, copies: true, note: fmt.Sprintf("entries %#x and %#x can both run in one call; probed at %#x only, so calls entering elsewhere are missed", a, b, keep)}}
}

// uncovered are the heads of the caller's loops (a back edge from code
// outside rs) that hold code of rs with an effect (see effect) of the
// expansion's own (not of one nested in it) but no start, their head being
// code of rs: each iteration runs a call that passes no start. (GCC may
// give the latch of a loop of the body to no scope, gcc -O3 seed 1374: a
// loop of calls nested in the body is no loop of calls of the body.) GCC unswitches a loop around a guarded call on the
// guard when its operand does not change in the loop, and the loop's copy
// for the early return runs only the return's code, its head past the
// expansion's entry, which the first iteration alone passes.
func (fl *flow) uncovered(rs [][2]uint64, starts []uint64, own func(uint64) bool) []uint64 {
	d := fl.dominators()
	var out []uint64
	for h, l := range d.loops {
		head := d.addr[h]
		if !holds(rs, head) {
			continue
		}
		caller := false
		for _, u := range l.latches {
			caller = caller || !holds(rs, d.addr[u])
		}
		if caller && fl.bodyLoop(l, rs) {
			continue
		}
		started, acts := false, false
		for i := range l.body {
			a := d.addr[i]
			started = started || contains(starts, a)
			acts = acts || holds(rs, a) && effect(fl.op[a]) && own(a)
		}
		if caller && acts && !started {
			out = append(out, head)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// handsOn are the rows of decl from which control goes on to another row
// of decl before it does anything a call is seen by (see effect): through
// instructions of one successor each. GCC gives the declaration's row to a
// jump on a path that joins an expansion at its entry (the tail of a
// caller's loop jumping back into the inlined body): the call is counted
// at the row the jump goes to; a start at the jump too would count it
// twice.
func (fl *flow) handsOn(decl map[uint64]bool) []uint64 {
	const maxChain = 16
	var out []uint64
	for a := range decl {
		x := a
		for i := 0; i < maxChain && !effect(fl.op[x]) && len(fl.succ[x]) == 1; i++ {
			x = fl.succ[x][0]
			if decl[x] {
				if x != a {
					out = append(out, a)
				}
				break
			}
		}
	}
	return out
}

// anchorStarts are the starts of an expansion counted at its anchors (see
// anchors).
func anchorStarts(as []uint64) []start {
	out := make([]start, 0, len(as))
	for _, x := range as {
		out = append(out, start{addr: x, copies: true, note: fmt.Sprintf("counted at a store or call each call makes once (%d in this expansion)", len(as))})
	}
	return out
}

// copies are the starts of the further copies of a body that starts at
// e, where a loop unrolled around the call laid them end to end: the
// instructions of e's copy, all the expansion's own, repeated right after
// it, operation for operation, with the same lengths and the same relative
// branches (LLVM marks the copies with no line of their own).
func (fl *flow) copies(e uint64, own func(uint64) bool) []uint64 {
	const minLen, maxLen = 6, 256
	i := -1
	for k, a := range fl.addrs {
		if a == e {
			i = k
		}
	}
	if i < 0 {
		return nil
	}
	same := func(x, y int) bool {
		ax, ay := fl.addrs[x], fl.addrs[y]
		ix, iy := fl.op[ax], fl.op[ay]
		if ix.Op != iy.Op || ix.Len != iy.Len || !own(ay) {
			return false
		}
		tx, okx := branchTarget(ax, ix)
		ty, oky := branchTarget(ay, iy)
		return okx == oky && (!okx || tx-ax == ty-ay) // the same relative branch
	}
	for n := 1; n <= maxLen && i+2*n <= len(fl.addrs); n++ {
		a := fl.addrs[i+n-1]
		if !own(a) || a+uint64(fl.op[a].Len) != fl.addrs[i+n] {
			return nil // the copy must be the expansion's own, contiguous code
		}
		if n < minLen {
			continue
		}
		match := func(j int) bool {
			if j+n > len(fl.addrs) {
				return false
			}
			for t := 0; t < n; t++ {
				if !same(i+t, j+t) {
					return false
				}
			}
			return true
		}
		if !match(i + n) {
			continue
		}
		var out []uint64
		for j := i + n; match(j); j += n {
			out = append(out, fl.addrs[j])
		}
		return out
	}
	return nil
}

func contains(xs []uint64, x uint64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// dropHoisted drops the entries that begin hoisted code: a piece without
// effects (see effectFree) from which control can reach another entry
// within an iteration of the caller's loops around it, but not one that
// follows on every path within the same iterations. Go puts the reload of an inlined call's argument so,
// in a loop before the call or before the test of a conditional call, and
// LLVM a register reload of the body on a path that skips the call: it is
// no call. A load that the rest of the call always follows is its first
// piece (LLVM schedules it into the caller's code).
func (fl *flow) dropHoisted(es []uint64, rs [][2]uint64) []uint64 {
	if len(es) < 2 {
		return es
	}
	var out []uint64
	for _, e := range es {
		hoisted := false
		if fl.effectFree(e, rs) {
			loops := fl.callerLoops(e, rs)
			for _, o := range es {
				if o == e || !fl.reachIn(e, o, loops) {
					continue
				}
				if fl.sameLoops(e, o, rs) && fl.postDominatesIn(o, e, loops) {
					hoisted = false
					break
				}
				hoisted = true
			}
		}
		if !hoisted {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return es
	}
	return out
}

// maxEffectFree bounds the piece effectFree looks at.
const maxEffectFree = 32

// effectFree reports whether the piece of rs control runs from e on,
// before it leaves rs (and code of no line: see entries), does nothing a
// call is seen by: no store outside
// the frame, no call (register loads, arithmetic, a spill, a jump out); at
// most maxEffectFree instructions.
func (fl *flow) effectFree(e uint64, rs [][2]uint64) bool {
	seen := map[uint64]bool{e: true}
	work := []uint64{e}
	for len(work) > 0 {
		a := work[len(work)-1]
		work = work[:len(work)-1]
		if len(seen) > maxEffectFree || effect(fl.op[a]) {
			return false
		}
		for _, s := range fl.succ[a] {
			if (holds(rs, s) || fl.neutral[s]) && !seen[s] {
				seen[s] = true
				work = append(work, s)
			}
		}
	}
	return true
}

// dominates reports whether every path from the instance's entry to b
// passes a.
func (fl *flow) dominates(a, b uint64) bool {
	if fl.entry == a {
		return true
	}
	return !fl.reachAvoiding(fl.entry, b, a)
}

// reachAvoiding reports whether control can go from x to y without
// passing avoid.
func (fl *flow) reachAvoiding(x, y, avoid uint64) bool {
	if x == avoid {
		return false
	}
	seen := map[uint64]bool{x: true}
	work := []uint64{x}
	for len(work) > 0 && len(seen) < 1<<18 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if n == y {
			return true
		}
		for _, s := range fl.succ[n] {
			if s != avoid && !seen[s] {
				seen[s] = true
				work = append(work, s)
			}
		}
	}
	return false
}

// postDominates reports whether every path from a reaches b before
// leaving the instance (a return, a tail call, a jump no table resolves).
func (fl *flow) postDominates(b, a uint64) bool {
	seen := map[uint64]bool{a: true}
	work := []uint64{a}
	for len(work) > 0 {
		if len(seen) > 1<<18 {
			return false
		}
		x := work[len(work)-1]
		work = work[:len(work)-1]
		succ := fl.succ[x]
		if len(succ) == 0 {
			return false // an exit reached without passing b
		}
		for _, s := range succ {
			if s == b || seen[s] {
				continue
			}
			seen[s] = true
			work = append(work, s)
		}
	}
	return true
}

// declRows are the addresses in site's own code (not in an expansion
// nested in it) where the line table has a statement row of fn's
// declaration line: GCC marks the start of each copy of an inlined body so.
func (ip *inlinePlacer) declRows(fn *types.Func, site *types.InlineSite, inst *types.Instance, fl *flow) map[uint64]bool {
	if ip.t.f == nil || fn.Decl.Line == 0 {
		return nil
	}
	rows, err := ip.t.f.Lines(&types.Func{Name: inst.Symbol, LowPC: inst.Entry, Ranges: inst.Ranges})
	if err != nil {
		return nil
	}
	m := ip.t.codeModel()
	out := map[uint64]bool{}
	for _, row := range rows {
		if !row.Stmt || row.Line != fn.Decl.Line || !fl.has(row.Addr) || !sameFile(row.File, fn.Decl.File) ||
			othersView(fn, site, row.Addr) {
			continue
		}
		a, ok := row.Addr, true
		if !holds(site.Ranges, a) {
			a, ok = fl.intoRanges(a, site.Ranges)
		}
		if ex := m.Expansions(a); ok && len(ex) > 0 && ex[0] == site {
			out[a] = true
		}
	}
	return out
}

// othersView reports whether the row at a marks the entry of another call
// of fn than site: that expansion's DIE has an empty range at a (from the
// same scope as site) and site's none, or it holds a and site's DIE does
// not. gcc -O3 seed 4032 inlines fn09's three fn10 calls into main; the
// third's copy on one path has the range [0x1614,0x1614) and its
// declaration row at 0x1614, which is the first call's last instruction
// there (its return value's move): a start of the first call at the row
// counted that path's calls twice. gcc -O2 seed 4758 gives one
// instruction of fn00's fn05 call (the mov at 0x188a, right after its
// entry_pc and row at 0x1883) to fn04's fn05 call: the row, which leads
// there (see intoRanges), is fn00's call's, not a copy of fn04's, and a
// start there counted each call twice.
func othersView(fn *types.Func, site *types.InlineSite, a uint64) bool {
	if emptyAt(site.Ranges, a) {
		return false
	}
	mine := holds(site.Ranges, a)
	for _, s := range fn.Inlined {
		if s == site {
			continue
		}
		if s.Parent == site.Parent && s.Caller == site.Caller && emptyAt(s.Ranges, a) || !mine && holds(s.Ranges, a) {
			return true
		}
	}
	return false
}

// emptyAt reports whether rs has the empty range [a,a): GCC's mark of
// where a view of the DIE begins, before the instruction at a.
func emptyAt(rs [][2]uint64, a uint64) bool {
	for _, r := range rs {
		if r[0] == a && r[1] == a {
			return true
		}
	}
	return false
}

// intoRanges is the first instruction of rs that control reaches from a,
// outside rs, through a few instructions of one successor each and no
// effect: GCC gives the row that marks a copy of an inlined body the
// address of the caller's instruction before it, where the DIE has an
// empty range (gcc -O3 seed 2389: fn09's loop of two fn11 calls unrolled,
// the second copy's row at 0x1eea, fn09's, its code from 0x1eef on).
func (fl *flow) intoRanges(a uint64, rs [][2]uint64) (uint64, bool) {
	const maxSteps = 4
	for range maxSteps {
		if effect(fl.op[a]) || len(fl.succ[a]) != 1 {
			return 0, false
		}
		if a = fl.succ[a][0]; holds(rs, a) {
			return a, true
		}
	}
	return 0, false
}

// continuation reports whether site is the rest of a call of fn rather
// than a call: GCC's partial inlining splits fn into a head it inlines
// and fn.part.N, and may inline the part back into an expansion of fn's
// head (or into fn's own body), where DWARF shows an expansion of fn
// inside one of fn, called from fn's declaration line. The head's site
// counts the call; one at the part would count it twice. (An inlined
// recursive call has its call site in fn's body, never at its
// declaration.)
func continuation(fn *types.Func, site *types.InlineSite) bool {
	if fn.Decl.Line == 0 || site.CallLine != fn.Decl.Line || !sameFile(site.CallFile, fn.Decl.File) {
		return false
	}
	if p := site.Parent; p != nil {
		return p.Callee == fn || p.Callee != nil && p.Callee.Name == fn.Name && p.Callee.Decl == fn.Decl
	}
	return site.Caller == fn.Name
}

func sameFile(a, b string) bool {
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

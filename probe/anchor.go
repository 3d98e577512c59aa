package probe

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/types"
)

// maxAnchorKeys bounds how many kinds of store anchors tries.
const maxAnchorKeys = 32

// anchors are the instructions of an expansion where calls are counted
// when its entries cannot say where one call ends and the next begins:
// LLVM keeps one DIE for the copies of a body that unrolling a caller's
// loop made (laid end to end, or apart, or merged into one another), and
// interleaves the caller's code with the body so that one call may pass
// several entries.
//
// An anchor is a store the body makes to memory outside the frame, or a
// direct call it makes, once per call: what a call does, which no
// optimisation may drop or repeat.
// The stores of one kind are those at the same source position (line and
// column, under the same chain of nested expansions) to the same place (a
// global's address, or else the same operation and displacement): each
// copy of the body has one. A kind is kept when, in the code of the host:
//
//   - no store of it is inside a loop of the body (whose back edges are
//     the expansion's own code), and each is in the same caller's loops
//     as the starts: it would run several times per call;
//   - every path from each start (see callStarts) passes one of them
//     before the iteration of the caller's loops ends or the function
//     returns: a conditional store would miss calls.
//
// Of the kinds kept, the one returned is made by a call before the body's
// own first line of code where one is, then the earliest in the body's
// source (a later statement may be conditional, made by one of the calls
// whose constant arguments the compiler folded, or in a loop of the body
// it unrolled), then the one with the fewest stores. The
// stores come with copies set when control can go from one to another
// within one iteration of the caller's loops: then the DIE holds several
// calls. ok is false when no kind holds (a body that stores nothing, or
// only under a condition). With own, only the body's own stores count,
// not those of expansions nested in it. A non-nil within limits the
// stores, and where the first is moved to, to those instructions.
func (ip *inlinePlacer) anchors(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64, own bool, within map[uint64]bool) (as []uint64, copies, ok bool) {
	best, copies, ok := ip.anchorKind(site, inst, fl, starts, own, within)
	if !ok {
		return nil, false, false
	}
	return fl.earliest(best.addrs, site.Ranges, within), copies, true
}

// anchorKind is the kind of store anchors counts the calls at (see
// anchors), copies set when its stores repeat within an iteration.
func (ip *inlinePlacer) anchorKind(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64, own bool, within map[uint64]bool) (best *storeKind, copies, ok bool) {
	rs := site.Ranges
	rows := ip.flows.rowsOf(inst, fl)
	m := ip.t.codeModel()
	if rows == nil || m == nil || len(starts) == 0 {
		return nil, false, false
	}
	kinds, first := storeKinds(site, m, rows, fl, own, within)
	sortKinds(kinds)
	// once: the chain's calls are made before the body's own first line
	// of code (see first), once per call of the expansion.
	once := func(chain []*types.InlineSite) bool {
		parent := site
		for _, n := range chain {
			if l, ok := first[parent][n.CallFile]; ok && n.CallLine > l {
				return false
			}
			parent = n
		}
		return true
	}
	// Of the kinds that hold, one made by a call before the body's own
	// first line of code (see once); then the earliest in the body's
	// source: a statement later in the body may be conditional, and made
	// in one of several calls whose constant arguments the compiler
	// folded (LLVM's unrolled copies), or in a loop of the body that the
	// compiler unrolled, several times per call; then the fewest stores.
	earlier := func(a, b *storeKind) bool {
		if once(a.chain) != once(b.chain) {
			return once(a.chain)
		}
		if sameFile(a.file, b.file) && a.line != b.line {
			return a.line < b.line
		}
		return len(a.addrs) < len(b.addrs)
	}
	// Stores of no line are kept apart, by the global they write: only
	// when no kind with a line holds.
	for _, lineless := range []bool{false, true} {
		tried := 0
		for _, k := range kinds {
			if k.lineless != lineless {
				continue
			}
			if tried == maxAnchorKeys {
				break
			}
			tried++
			if best != nil && !earlier(k, best) || !fl.anchored(k.addrs, starts, rs) {
				continue
			}
			best = k
		}
		if best != nil {
			break
		}
	}
	if best == nil {
		return nil, false, false
	}
	copies = fl.repeats(best.addrs, rs)
	if copies && repeatsInCall(kinds, best) {
		return nil, false, false
	}
	return best, copies, true
}

// repeatsInCall reports whether the stores of best repeat within a call
// rather than once per copy of the body: a kind of an earlier statement of
// the body (one that anchors nothing, being conditional) has fewer
// stores, and each copy of the body would have its own. rust-O3 seed 2214
// inlines fn08 (rec, then a loop of three fn10 calls) into fn04 once,
// LLVM hoists rec's unconditional store out of it and unrolls the loop:
// fn10's records are three per call, rec's conditional stores one.
func repeatsInCall(kinds []*storeKind, best *storeKind) bool {
	for _, k := range kinds {
		if !k.lineless && !best.lineless && sameFile(k.file, best.file) && k.line < best.line && len(k.addrs) < len(best.addrs) {
			return true
		}
	}
	return false
}

// A storeKind is the stores (or direct calls) of an expansion at one
// source position to one place: see anchors.
type storeKind struct {
	key   string
	chain []*types.InlineSite // from the outermost nested expansion in
	rip   bool
	addrs []uint64
	file  string // where in the body: the source line of the store,
	line  int    // or of the outermost nested call holding it
	// lineless stores have line 0: LLVM gives it to a store it merged
	// from several statements (the early return's and the tail's record,
	// hoisted above the guard) and to the copies an unrolled loop made of
	// it; and to the call of a nested expansion it merged from several
	// (rust-O3 seed 3099: fn09's su calls of lines 148, 151 and 155 made
	// one store under an su called from line 0, which runs once for all
	// three; seed 3208: fn09's fn10 calls).
	lineless bool
}

// storeKinds are the kinds of store the expansion site makes in fl, in
// the order of their first store, and the first line of code each
// expansion has of its own, per file: a call made before it is made once
// per call of the expansion (a call in a loop of the body comes after the
// loop's own code). With own, only the body's own stores count; a
// non-nil within limits them to those instructions.
func storeKinds(site *types.InlineSite, m *code.Model, rows []types.Line, fl *flow, own bool, within map[uint64]bool) ([]*storeKind, map[*types.InlineSite]map[string]int) {
	first := map[*types.InlineSite]map[string]int{}
	byKey := map[string]*storeKind{}
	var kinds []*storeKind
	for _, a := range fl.addrs {
		if !holds(site.Ranges, a) || within != nil && !within[a] {
			continue
		}
		ex := m.Expansions(a)
		row, found := rowAt(rows, a)
		if !found || len(ex) == 0 {
			continue
		}
		if row.Line != 0 && !foreign(ex[0], row) {
			own := ex[0]
			if f := first[own]; f == nil {
				first[own] = map[string]int{row.File: row.Line}
			} else if l, ok := f[row.File]; !ok || row.Line < l {
				f[row.File] = row.Line
			}
		}
		in := fl.op[a]
		place, global, ok := anchorPlace(a, in)
		if !ok || row.Line == 0 && !global {
			continue
		}
		chain, inside := nestedChain(ex, site)
		if !inside || own && len(chain) > 0 {
			continue
		}
		k := storeKey(chain, row, in, place)
		if byKey[k] == nil {
			kd := &storeKind{key: k, chain: chain, rip: global, file: row.File, line: row.Line, lineless: row.Line == 0}
			if len(chain) > 0 {
				kd.file, kd.line = chain[0].CallFile, chain[0].CallLine
			}
			for _, n := range chain {
				kd.lineless = kd.lineless || n.CallLine == 0
			}
			byKey[k] = kd
			kinds = append(kinds, byKey[k])
		}
		byKey[k].addrs = append(byKey[k].addrs, a)
	}
	return kinds, first
}

// storeKey names a kind of store: the chain of nested expansions, the
// source position (none for a lineless store), the operation and the
// place it writes.
func storeKey(chain []*types.InlineSite, row types.Line, in x86asm.Inst, place string) string {
	var path strings.Builder
	for _, n := range chain {
		name := ""
		if n.Callee != nil {
			name = n.Callee.Name
		}
		fmt.Fprintf(&path, "/%s@%s:%d:%d", name, n.CallFile, n.CallLine, n.CallColumn)
	}
	if row.Line == 0 {
		return fmt.Sprintf("%s|line 0|%s|%s", path.String(), in.Op, place)
	}
	return fmt.Sprintf("%s|%s:%d:%d|%s|%s", path.String(), row.File, row.Line, row.Column, in.Op, place)
}

// sortKinds puts the expansion's own stores first, then those of the
// expansions least deeply nested in it, earliest call first; stores to a
// global's address before others: every copy writes the same one,
// whatever registers it was given.
func sortKinds(kinds []*storeKind) {
	sort.SliceStable(kinds, func(i, j int) bool {
		a, b := kinds[i], kinds[j]
		if len(a.chain) != len(b.chain) {
			return len(a.chain) < len(b.chain)
		}
		for n := range a.chain {
			if a.chain[n].CallLine != b.chain[n].CallLine {
				return a.chain[n].CallLine < b.chain[n].CallLine
			}
		}
		return a.rip && !b.rip
	})
}

// anchorsEach counts the calls of an expansion entered at several starts,
// of which no call passes two and no one kind of store anchors all, start
// by start: LLVM lays the copies of a guarded body that a loop unrolled
// around its call end to end on the early return's path, one iteration
// holding three calls, and keeps the rest in a loop of its own, one call
// an iteration; the starts lie in different loops of the caller. Each
// start's part is the code of the expansion control reaches from it
// within an iteration of the caller's loops around it and reaches from no
// other start: where a kind of store repeats in it, the start's calls
// are counted at those stores (see anchors); elsewhere the start stays.
// ok is false when no part holds copies.
func (ip *inlinePlacer) anchorsEach(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64) ([]start, bool) {
	rs := site.Ranges
	reach := make([]map[uint64]bool, len(starts))
	for i, s := range starts {
		reach[i] = fl.iteration(s, rs)
	}
	var out []start
	found := false
	keys := make([]string, len(starts)) // the kind each part is counted at
	for i, s := range starts {
		part := map[uint64]bool{}
		for a := range reach[i] {
			shared := false
			for j := range starts {
				shared = shared || j != i && reach[j][a]
			}
			if !shared {
				part[a] = true
			}
		}
		if k, copies, ok := ip.anchorKind(site, inst, fl, []uint64{s}, false, part); ok && copies {
			out = append(out, anchorStarts(fl.earliest(k.addrs, rs, part))...)
			found, keys[i] = true, k.key
			continue
		}
		out = append(out, start{addr: s, copies: true})
	}
	if found {
		out = append(out, ip.sharedAnchors(site, inst, fl, starts, reach, keys)...)
	}
	return out, found
}

// sharedAnchors are the stores in the code that the iterations of several
// starts reach (reach: see anchorsEach), where each of those starts' calls
// is counted at stores of one kind (keys) in its own part: the stores of
// that kind in the shared code are further calls', one each, as every
// call of those starts passes a store of its own part first. rust-O3
// seed 4975 unrolls fn01's loop of three fn03 calls, fn07 inlined into
// each, its guard true in all three: the early returns' copies lie end to
// end, and where fn03's record calls cold() a second chain of the first
// two copies jumps back into the third: reached from both chains'
// starts, it was counted by neither (45 of 60). None where a start
// reaching the shared code is not counted at stores, or at another kind,
// or lies in other loops of the caller than a store there.
func (ip *inlinePlacer) sharedAnchors(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64, reach []map[uint64]bool, keys []string) []start {
	rs := site.Ranges
	shared := map[uint64]bool{}
	key := ""
	for i := range starts {
		for a := range reach[i] {
			for j := range starts {
				if j == i || !reach[j][a] {
					continue
				}
				if keys[i] == "" || key != "" && keys[i] != key {
					return nil
				}
				shared[a], key = true, keys[i]
			}
		}
	}
	rows := ip.flows.rowsOf(inst, fl)
	m := ip.t.codeModel()
	if len(shared) == 0 || rows == nil || m == nil {
		return nil
	}
	kinds, _ := storeKinds(site, m, rows, fl, false, shared)
	var out []start
	for _, k := range kinds {
		if k.key != key {
			continue
		}
		for _, a := range k.addrs {
			if fl.inOwnLoop(a, rs) {
				return nil
			}
			for i, s := range starts {
				if reach[i][a] && !fl.sameLoops(a, s, rs) {
					return nil
				}
			}
			out = append(out, start{addr: a, copies: true, note: "counted at a store each call makes once, in code the paths of several starts share"})
		}
	}
	return out
}

// anchorsByLoops counts the calls of an expansion whose starts lie in
// different loops of the caller, one call passing several, group by group
// (the starts in the same caller's loops), each at the stores of the code
// of the expansion in its group's loops (see anchors). clang -O2 seed
// 1357 unrolls fn03's loop of two fn04 calls, whose bodies each hold a
// loop of three fn10 calls, and fn10 unrolls its own loop of two fn13
// calls: one DIE of fn13 holds four calls, two per copy of fn04's loop,
// and control goes from the first copy's to the second's. A kind of store
// anchors no group's starts but its own, in other loops; a store of one
// kind is made once per call, wherever it is. ok is false when a group has
// no anchor, or all starts are in one group.
func (ip *inlinePlacer) anchorsByLoops(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64) ([]start, bool) {
	rs := site.Ranges
	var groups [][]uint64
	for _, s := range starts {
		placed := false
		for i, g := range groups {
			if !placed && fl.sameLoops(g[0], s, rs) {
				groups[i], placed = append(g, s), true
			}
		}
		if !placed {
			groups = append(groups, []uint64{s})
		}
	}
	if len(groups) < 2 {
		return nil, false
	}
	var all []uint64
	for _, g := range groups {
		within := map[uint64]bool{}
		for _, a := range fl.addrs {
			if holds(rs, a) && fl.sameLoops(a, g[0], rs) {
				within[a] = true
			}
		}
		as, _, ok := ip.anchors(site, inst, fl, g, false, within)
		if !ok {
			return nil, false
		}
		all = append(all, as...)
	}
	return anchorStarts(all), true
}

// iteration is the code of rs that control reaches from s (s included)
// before it goes back to the head of a caller's loop around s.
func (fl *flow) iteration(s uint64, rs [][2]uint64) map[uint64]bool {
	d := fl.dominators()
	loops := fl.callerLoops(s, rs)
	out := map[uint64]bool{s: true}
	seen := map[uint64]bool{s: true}
	work := []uint64{s}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, y := range fl.succ[x] {
			if seen[y] || d.backEdge(x, y, loops) {
				continue
			}
			seen[y] = true
			if holds(rs, y) {
				out[y] = true
			}
			work = append(work, y)
		}
	}
	return out
}

// anchored checks a kind of stores as anchors (see anchors).
func (fl *flow) anchored(as, starts []uint64, rs [][2]uint64) bool {
	set := map[uint64]bool{}
	for _, a := range as {
		set[a] = true
		if !fl.has(a) || fl.inOwnLoop(a, rs) {
			return false
		}
		for _, s := range starts {
			if !fl.sameLoops(a, s, rs) {
				return false
			}
		}
	}
	for _, s := range starts {
		if !fl.everyPathHits(s, set, fl.callerLoops(s, rs)) {
			return false
		}
	}
	return true
}

// everyPathHits reports whether every path from s passes one of set
// before it leaves the instance or goes back to the head of one of loops.
func (fl *flow) everyPathHits(s uint64, set map[uint64]bool, loops []*loop) bool {
	d := fl.dominators()
	seen := map[uint64]bool{s: true}
	work := []uint64{s}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if set[x] {
			continue
		}
		succ := fl.succ[x]
		if len(succ) == 0 {
			return false
		}
		for _, y := range succ {
			if d.backEdge(x, y, loops) {
				return false
			}
			if !seen[y] {
				seen[y] = true
				work = append(work, y)
			}
		}
	}
	return true
}

// repeats reports whether control can go from one of as to another (or
// the same) within an iteration of the caller's loops around it.
func (fl *flow) repeats(as []uint64, rs [][2]uint64) bool {
	for _, a := range as {
		loops := fl.callerLoops(a, rs)
		for _, b := range as {
			if fl.reachIn(a, b, loops) {
				return true
			}
		}
	}
	return false
}

// earliest moves each anchor of as that no other anchor can precede within
// an iteration (the first copy's) to the earliest instruction of the
// expansion's code that counts the same calls, where more of the call's
// arguments are still where the caller put them: up the anchor's
// dominators while they hold rs, in the same caller's loops and outside
// the body's own loops, each followed by the anchor on every path within
// the iteration before any other anchor. The anchors of later copies stay:
// the code before them may be the end of the copy before, whose values
// are not their call's.
func (fl *flow) earliest(as []uint64, rs [][2]uint64, within map[uint64]bool) []uint64 {
	d := fl.dominators()
	set := map[uint64]bool{}
	for _, a := range as {
		set[a] = true
	}
	out := make([]uint64, len(as))
	for k, a := range as {
		out[k] = a
		i, ok := d.idx[a]
		if !ok || fl.followsAnother(a, as, rs) {
			continue
		}
		for p := d.idom[i]; p >= 0; p = d.idom[p] {
			pa := d.addr[p]
			if !holds(rs, pa) || within != nil && !within[pa] || set[pa] || fl.inOwnLoop(pa, rs) || !fl.sameLoops(pa, a, rs) {
				break
			}
			others := map[uint64]bool{}
			for b := range set {
				others[b] = b != a
			}
			if !fl.postDominatesIn(a, pa, fl.callerLoops(pa, rs)) || fl.hitsBefore(pa, a, others) {
				break
			}
			out[k] = pa
		}
	}
	return out
}

// followsAnother reports whether control can go from another anchor of as
// to a within an iteration of the caller's loops around it.
func (fl *flow) followsAnother(a uint64, as []uint64, rs [][2]uint64) bool {
	for _, b := range as {
		if b != a && fl.reachIn(b, a, fl.callerLoops(b, rs)) {
			return true
		}
	}
	return false
}

// hitsBefore reports whether control can go from p to one of set before
// it reaches a.
func (fl *flow) hitsBefore(p, a uint64, set map[uint64]bool) bool {
	return fl.search(p, func(_, to uint64) bool { return to != a }, func(y uint64) bool { return set[y] })
}

// storeTo reports the memory operand an instruction writes, if it writes
// one (a MOV to memory, a read-modify-write such as INC or ADD, a vector
// store); reads (CMP, TEST, PUSH of memory) are not stores.
// anchorPlace is what the instruction at a does that may anchor calls: a
// store outside the frame (to a global's address, or an operation and a
// displacement), or a direct call (a body that records through a call
// makes it once per call, as it makes a store). global is set for a
// global's address and a call's target: the same in every copy, whatever
// registers each was given.
func anchorPlace(a uint64, in x86asm.Inst) (place string, global, ok bool) {
	if in.Op == x86asm.CALL {
		rel, ok := in.Args[0].(x86asm.Rel)
		if !ok {
			return "", false, false
		}
		return fmt.Sprintf("call %#x", uint64(int64(a)+int64(in.Len)+int64(rel))), true, true
	}
	mem, st := storeTo(in)
	if !st || !effect(in) {
		return "", false, false
	}
	if mem.Base == x86asm.RIP {
		return fmt.Sprintf("@%#x", uint64(int64(a)+int64(in.Len)+int64(int32(mem.Disp)))), true, true
	}
	return fmt.Sprintf("%s%+d", mem.Segment, int64(int32(mem.Disp))), false, true
}

func storeTo(in x86asm.Inst) (x86asm.Mem, bool) {
	mem, ok := in.Args[0].(x86asm.Mem)
	if !ok {
		return mem, false
	}
	switch in.Op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.PUSH, x86asm.CALL, x86asm.JMP, x86asm.NOP, x86asm.LEA,
		x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD, x86asm.PTEST,
		x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW,
		x86asm.CLFLUSH, x86asm.LDMXCSR, x86asm.FLD, x86asm.FILD:
		return mem, false
	}
	return mem, true
}

// foreign reports whether row, in the code of expansion s, is a line of
// another function: one before the callee's declaration in its file (LLVM
// gives an instruction it merged from a nested body the outer scope).
func foreign(s *types.InlineSite, row types.Line) bool {
	if s.Callee == nil || s.Callee.Decl.Line == 0 {
		return false
	}
	return sameFile(row.File, s.Callee.Decl.File) && row.Line < s.Callee.Decl.Line
}

// nestedChain is the expansions between site and the innermost one of
// chain (innermost first, as Expansions gives them), outermost first;
// inside is false when site is not in chain.
func nestedChain(chain []*types.InlineSite, site *types.InlineSite) (out []*types.InlineSite, inside bool) {
	for i, s := range chain {
		if s != site {
			continue
		}
		for k := i - 1; k >= 0; k-- {
			out = append(out, chain[k])
		}
		return out, true
	}
	return nil, false
}

// rowAt is the row covering a in rows (in address order).
func rowAt(rows []types.Line, a uint64) (types.Line, bool) {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > a }) - 1
	if i < 0 {
		return types.Line{}, false
	}
	return rows[i], true
}

package probe

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/types"
)

// maxAnchorKeys bounds how many kinds of store anchors tries.
const maxAnchorKeys = 8

// anchors are the instructions of an expansion where calls are counted
// when its entries cannot say where one call ends and the next begins:
// LLVM keeps one DIE for the copies of a body that unrolling a caller's
// loop made (laid end to end, or apart, or merged into one another), and
// interleaves the caller's code with the body so that one call may pass
// several entries.
//
// An anchor is a store the body makes to memory outside the frame, once
// per call: what a call does, which no optimisation may drop or repeat.
// The stores of one kind are those at the same source position (line and
// column, under the same chain of nested expansions) to the same place (a
// global's address, or else the same operation and displacement): each
// copy of the body has one. A kind is kept when, in the code of the host:
//
//   - no store of it is inside a loop of the body (whose back edges are
//     the expansion's own code): it would run several times per call;
//   - every path from each start (see callStarts) passes one of them
//     before the iteration of the caller's loops ends or the function
//     returns: a conditional store would miss calls.
//
// The first kind in address order that holds is returned, with copies set
// when control can go from one of its stores to another within one
// iteration of the caller's loops: then the DIE holds several calls. ok is
// false when no kind holds (a body that stores nothing, or only under a
// condition).
func (r *Resolver) anchors(site *types.InlineSite, inst *types.Instance, fl *flow, starts []uint64) (as []uint64, copies, ok bool) {
	rs := site.Ranges
	rows := r.rowsOf(inst, fl)
	m := r.codeModel()
	if rows == nil || m == nil || len(starts) == 0 {
		return nil, false, false
	}
	byKey := map[string][]uint64{}
	var keys []string
	for _, a := range fl.addrs {
		if !holds(rs, a) {
			continue
		}
		in := fl.op[a]
		mem, st := storeTo(in)
		if !st || mem.Base == x86asm.RSP || mem.Base == x86asm.RBP || mem.Base == x86asm.ESP {
			continue
		}
		row, found := rowAt(rows, a)
		if !found || row.Line == 0 {
			continue
		}
		path, inside := nestedPath(m.Expansions(a), site)
		if !inside {
			continue
		}
		place := fmt.Sprintf("%s%+d", mem.Segment, int64(int32(mem.Disp)))
		if mem.Base == x86asm.RIP {
			place = fmt.Sprintf("@%#x", uint64(int64(a)+int64(in.Len)+int64(int32(mem.Disp))))
		}
		k := fmt.Sprintf("%s|%s:%d:%d|%s|%s", path, row.File, row.Line, row.Column, in.Op, place)
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], a)
	}
	// The expansion's own stores first, then those of the expansions
	// least deeply nested in it (a call in a loop of the body makes
	// several stores per call); stores to a global's address before
	// others: every copy writes the same one, whatever registers it was
	// given.
	rank := func(k string) int {
		path, _, _ := strings.Cut(k, "|")
		r := 2 * strings.Count(path, "/")
		if !strings.Contains(k, "|@") {
			r++
		}
		return r
	}
	sort.SliceStable(keys, func(i, j int) bool { return rank(keys[i]) < rank(keys[j]) })
	for n, k := range keys {
		if n == maxAnchorKeys {
			break
		}
		as := byKey[k]
		if fl.anchored(as, starts, rs) {
			return as, fl.repeats(as, rs), true
		}
	}
	return nil, false, false
}

// anchored checks a kind of stores as anchors (see anchors).
func (fl *flow) anchored(as, starts []uint64, rs [][2]uint64) bool {
	set := map[uint64]bool{}
	for _, a := range as {
		set[a] = true
		if !fl.has(a) || fl.inOwnLoop(a, rs) {
			return false
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

// storeTo reports the memory operand an instruction writes, if it writes
// one (a MOV to memory, a read-modify-write such as INC or ADD, a vector
// store); reads (CMP, TEST, PUSH of memory) are not stores.
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

// nestedPath names the expansions between site and the innermost one of
// chain (innermost first, as Expansions gives them); inside is false when
// site is not in chain.
func nestedPath(chain []*types.InlineSite, site *types.InlineSite) (path string, inside bool) {
	for i, s := range chain {
		if s != site {
			continue
		}
		var b strings.Builder
		for k := i - 1; k >= 0; k-- {
			name := ""
			if chain[k].Callee != nil {
				name = chain[k].Callee.Name
			}
			fmt.Fprintf(&b, "/%s@%d:%d", name, chain[k].CallLine, chain[k].CallColumn)
		}
		return b.String(), true
	}
	return "", false
}

// rowsOf are the line table rows of inst's code, read once.
func (r *Resolver) rowsOf(inst *types.Instance, fl *flow) []types.Line {
	if r.f == nil {
		return nil
	}
	if fl.rows == nil {
		rows, err := r.f.Lines(&types.Func{Name: inst.Symbol, LowPC: inst.Entry, Ranges: inst.Ranges})
		if err != nil || rows == nil {
			rows = []types.Line{}
		}
		fl.rows = rows
	}
	return fl.rows
}

// rowAt is the row covering a in rows (in address order).
func rowAt(rows []types.Line, a uint64) (types.Line, bool) {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > a }) - 1
	if i < 0 {
		return types.Line{}, false
	}
	return rows[i], true
}

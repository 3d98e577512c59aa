package probe

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
)

// flow is the control flow of one instance of a function (its out-of-line
// copy, a clone, a piece): every instruction of its ranges with the
// addresses control can go to next. It is what placement reads to find
// where calls enter an inline expansion: by the edges that come into its
// ranges from outside them, not by address order.
type flow struct {
	addrs []uint64            // instruction addresses, ascending
	succ  map[uint64][]uint64 // successors inside the instance
	pred  map[uint64][]uint64 // predecessors inside the instance
	op    map[uint64]x86asm.Inst
	entry uint64 // where calls of the instance enter
	// indirect holds the indirect jumps that may stay inside the
	// instance (a jump table's), whose targets are unknown.
	indirect []uint64
	neutral  map[uint64]bool // see flowIndex.neutral; nil until asked
	dom      *dom            // see dominators; nil until asked
	rows     []types.Line    // see flowIndex.rowsOf; nil until asked
}

// branchTarget is x86.BranchTarget, for placement.
func branchTarget(a uint64, ins x86asm.Inst) (uint64, bool) { return x86.BranchTarget(a, ins) }

// has reports whether a starts an instruction of the instance.
func (fl *flow) has(a uint64) bool {
	_, ok := fl.op[a]
	return ok
}

// entries are the instructions of rs that control reaches from outside
// rs: the targets of edges whose source is not in rs, and the instance's
// own entry when rs holds it. An instruction of rs no edge reaches (an
// alignment pad after a jump) is not one. Code of no source line
// (neutral: line 0, which LLVM gives to loop control and merged
// instructions) between two pieces of rs does not make the second an
// entry: only paths that come from code with a line of its own, or from
// the instance's entry, do.
func (fl *flow) entries(rs [][2]uint64, neutral map[uint64]bool) []uint64 {
	var out []uint64
	for _, a := range fl.addrs {
		if !holds(rs, a) {
			continue
		}
		enter := a == fl.entry
		for _, p := range fl.pred[a] {
			enter = enter || !holds(rs, p) && fl.fromOutside(p, rs, neutral)
		}
		if enter {
			out = append(out, a)
		}
	}
	return out
}

// fromOutside reports whether p, outside rs, is reached from code outside
// rs that is not neutral (or is the instance's entry), walking back through
// neutral code only.
func (fl *flow) fromOutside(p uint64, rs [][2]uint64, neutral map[uint64]bool) bool {
	seen := map[uint64]bool{p: true}
	work := []uint64{p}
	for len(work) > 0 && len(seen) < 1<<16 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if !neutral[x] || x == fl.entry {
			return true
		}
		for _, q := range fl.pred[x] {
			if !seen[q] && !holds(rs, q) {
				seen[q] = true
				work = append(work, q)
			}
		}
	}
	return false
}

func holds(rs [][2]uint64, a uint64) bool {
	for _, r := range rs {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
}

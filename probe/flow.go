package probe

import (
	"slices"

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

// walk is what a backwards walk (see walkBack) does at an instruction.
type walk int

const (
	walkOn   walk = iota // go on to the instruction's predecessors
	walkStop             // end this path here
	walkFail             // give the whole walk up
)

// walkBack walks back from a along every path that reaches it, visiting
// each instruction before a once, the last visited first (a's nearest
// predecessor on the path walked last), and asking visit what to do at
// it. It reports false when visit gives the walk up, when the instance
// has jumps of unknown targets (a jump table's: the paths they take are
// unknown), or when it would visit more than limit instructions.
func (fl *flow) walkBack(a uint64, limit int, visit func(x uint64) walk) bool {
	if len(fl.indirect) > 0 {
		return false
	}
	seen := map[uint64]bool{}
	work := slices.Clone(fl.pred[a])
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[x] {
			continue
		}
		if seen[x] = true; len(seen) > limit {
			return false
		}
		switch visit(x) {
		case walkFail:
			return false
		case walkOn:
			work = append(work, fl.pred[x]...)
		}
	}
	return true
}

// fromBefore reports whether a path back through x leaves the instance's
// code: x is its entry, or code only a jump from outside reaches (no
// predecessor inside, and not an alignment pad).
func (fl *flow) fromBefore(x uint64) bool {
	return x == fl.entry || len(fl.pred[x]) == 0 && fl.op[x].Op != x86asm.NOP
}

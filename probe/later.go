package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/types"
)

// maxLaterSearch bounds the instructions laterInline looks at past a start.
const maxLaterSearch = 256

// laterInline finds, for an inline expansion's start where an argument
// the probe reads has no location yet (Go and LLVM describe a parameter
// from the instruction that first uses it, a few instructions into the
// body), a later address of the expansion that every call passes exactly
// once and where more of the arguments are readable: the first, in the
// order control reaches them, where all are, else the first that reads
// more than the start does. The address p qualifies when every path from
// the start s reaches p before leaving the function copy (p
// post-dominates s), every path to p passes s (s dominates p), s does not
// run again before p, nor p before s: so p runs once per call counted at
// s. Where the expansion's DIE holds several calls (st.copies), p must
// also come before control can reach another of its starts (others): the
// code past one is the next call's; and before a parameter's constant
// changes (the entry of its location list made for the next copy): a
// start may lie deep in its copy, at a store (rust-O3 seed 2314: fn06's
// second copy begins at 0x16fab, where c turns from 0 to 1, and is
// counted at 0x16fb6); and before an effect of the caller's code (a
// store outside the frame, a call) outside the expansion's ranges: the
// caller's code between copies leads into the next one, whose first
// instructions may come before its start (clang -O2 seed 3586: fn10's
// second copy starts at 0x132c, where a has no location; past fn08's
// record at 0x1374 the third copy's code sets RBX to its own a at 0x13c0,
// and its start is the store at 0x13d0). It returns p, the expansion's parameters there and
// a note, or s and vars unchanged.
func (jn *joiner) laterInline(fn *types.Func, site *types.InlineSite, st start, others []uint64, args []Arg, vars []types.Var) (uint64, []types.Var, string) {
	s := st.addr
	if st.mark != nil || len(args) == 0 || jn.t.f == nil {
		return s, vars, ""
	}
	next := map[uint64]bool{}
	for _, o := range others {
		next[o] = o != s
	}
	readable := func(pc uint64, vs []types.Var) (int, []string) { return jn.readableAt(fn, args, pc, vs) }
	have, missing := readable(s, vars)
	if have < 0 || len(missing) == 0 {
		return s, vars, ""
	}
	inst := jn.flows.hostOf(site)
	if inst == nil {
		return s, vars, ""
	}
	fl, err := jn.flows.of(inst)
	if err != nil || !fl.has(s) {
		return s, vars, ""
	}
	consts := listConsts(vars)
	bestN, best, bestVars := have, s, vars
	seen := map[uint64]bool{s: true}
	queue := []uint64{s}
	for len(queue) > 0 && len(seen) < maxLaterSearch {
		x := queue[0]
		queue = queue[1:]
		for _, y := range fl.succ[x] {
			if seen[y] {
				continue
			}
			seen[y] = true
			var vs []types.Var
			once := holds(site.Ranges, y) && fl.onceAfter(s, y)
			if once || st.copies && holds(site.Ranges, y) {
				if all, err := jn.t.varsAt(y); err == nil {
					vs = inlineParams(fn, all)
				}
			}
			if st.copies && (otherConst(consts, vs) || !holds(site.Ranges, y) && effect(fl.op[y])) {
				// The next copy's code, and all past it; or an
				// effect of the caller's code between two copies
				// (another call's), past which the next begins.
				continue
			}
			queue = append(queue, y)
			if !once || st.copies && (next[y] || fl.hitsBefore(s, y, next)) {
				continue
			}
			n, _ := readable(y, vs)
			if n > bestN {
				bestN, best, bestVars = n, y, vs
			}
			if n == len(args) {
				queue = nil
				break
			}
		}
	}
	if best == s {
		return s, vars, ""
	}
	return best, bestVars, fmt.Sprintf("%s has no location at the expansion's start %#x: read at %#x, which every call passes once", strings.Join(missing, ", "), s, best)
}

// listConsts are the constants that entries of location lists give vars
// (not one location for the whole scope), by name.
func listConsts(vars []types.Var) map[string]int64 {
	out := map[string]int64{}
	for _, v := range vars {
		if p := v.Loc.Pieces; !v.Loc.Whole && len(p) == 1 && p[0].Kind == types.LocConst {
			out[v.Name] = p[0].Offset
		}
	}
	return out
}

// otherConst reports whether a var of vars is a constant of a location
// list other than the one consts holds for its name.
func otherConst(consts map[string]int64, vars []types.Var) bool {
	for name, k := range listConsts(vars) {
		if c, ok := consts[name]; ok && c != k {
			return true
		}
	}
	return false
}

// onceAfter reports whether p runs exactly once for each run of s: every
// path from s reaches p before leaving the copy, every path to p passes
// s, and neither runs again before the other does.
func (fl *flow) onceAfter(s, p uint64) bool {
	return fl.postDominates(p, s) && fl.dominates(s, p) && !fl.again(s, p) && !fl.again(p, s)
}

// again reports whether a can run again after itself without b in between.
func (fl *flow) again(a, b uint64) bool {
	for _, s := range fl.succ[a] {
		if s == a || s != b && fl.reachAvoiding(s, a, b) {
			return true
		}
	}
	return false
}

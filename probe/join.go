package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// joiner moves a site where an argument the probe reads has no location
// yet to a later address every call passes once (later, laterInline), or
// counts an expansion's starts where their paths join (joinStarts): it
// reads the code's flow (flows), the frame (frames) and what a fetch can
// read at an address (fetches).
type joiner struct {
	t       *target
	fetches *fetcher
	frames  *frameTable
	flows   *flowIndex
}

// readableAt counts the arguments a probe at pc reads among args, with the
// expansion's parameters vs there, and names those it cannot; n is -1 for
// a definition that reads a register or $-variable, which means its value
// at the start.
func (jn *joiner) readableAt(fn *types.Func, args []Arg, pc uint64, vs []types.Var) (n int, missing []string) {
	vs = jn.frames.inFrame(pc, vs)
	for _, a := range args {
		if strings.HasPrefix(a.Base, "%") || strings.HasPrefix(a.Base, "$") {
			return -1, nil
		}
		f, err := jn.fetches.fetch(fn, a, vs, siteAt{kind: spec.SiteInline, pc: pc})
		if err == nil && f.Unavailable == "" {
			n++
		} else {
			missing = append(missing, a.Name)
		}
	}
	return n, missing
}

// joinStarts counts an expansion entered at several starts, none of which
// reads every argument, at the first address J of its code where the
// paths from them join and more arguments are readable, when J runs
// exactly once for each run of a start, right after it (LLVM's loop
// rotation enters a loop's first call at one start and the next calls at
// another, both going on to the code where the parameters' locations
// begin):
//
//   - every path from each start reaches J before leaving the function
//     copy (J post-dominates every start);
//   - every path to J from the copy's entry, or from code no edge reaches
//     (a landing pad, a jump table's target), passes a start;
//   - no path from a start reaches a start again before J, and none from J
//     reaches J again before a start.
//
// Each run of J then follows the run of the start that counted the call,
// with no other start between: J counts the same calls. Otherwise, or
// where a start carries a mark, starts come back unchanged.
func (jn *joiner) joinStarts(fn *types.Func, site *types.InlineSite, starts []start, args []Arg) []start {
	if len(starts) < 2 || len(args) == 0 || jn.t.f == nil {
		return starts
	}
	set := map[uint64]bool{}
	best := 0
	copies := false
	for _, st := range starts {
		if st.mark != nil {
			return starts
		}
		vars, err := jn.t.varsAt(st.addr)
		if err != nil {
			return starts
		}
		n, missing := jn.readableAt(fn, args, st.addr, inlineParams(fn, vars))
		if n < 0 || len(missing) == 0 {
			return starts
		}
		best = max(best, n)
		set[st.addr] = true
		copies = copies || st.copies
	}
	inst := jn.flows.hostOf(site)
	if inst == nil {
		return starts
	}
	fl, err := jn.flows.of(inst)
	if err != nil {
		return starts
	}
	for _, st := range starts {
		if !fl.has(st.addr) {
			return starts
		}
	}
	seen := map[uint64]bool{}
	var queue []uint64
	for _, st := range starts {
		seen[st.addr] = true
		queue = append(queue, st.addr)
	}
	for len(queue) > 0 && len(seen) < maxLaterSearch {
		x := queue[0]
		queue = queue[1:]
		for _, j := range fl.succ[x] {
			if seen[j] {
				continue
			}
			seen[j] = true
			queue = append(queue, j)
			if !holds(site.Ranges, j) || !fl.joins(starts, set, j) {
				continue
			}
			all, err := jn.t.varsAt(j)
			if err != nil {
				continue
			}
			n, missing := jn.readableAt(fn, args, j, inlineParams(fn, all))
			if n <= best {
				continue
			}
			note := fmt.Sprintf("the %d starts %s join at %#x, which runs once after each: counted and read there", len(starts), startList(starts), j)
			if len(missing) > 0 {
				note += fmt.Sprintf(" (%s not readable there either)", strings.Join(missing, ", "))
			}
			return []start{{addr: j, copies: copies, note: note}}
		}
	}
	return starts
}

// joins reports whether j runs exactly once after each run of one of
// starts (set holds their addresses), with no start between: see
// joinStarts.
func (fl *flow) joins(starts []start, set map[uint64]bool, j uint64) bool {
	if set[j] {
		return false
	}
	for _, a := range fl.addrs {
		// The entry, and code no edge reaches (a landing pad, a jump
		// table's target): every way in must pass a start before j.
		if (a == fl.entry || len(fl.pred[a]) == 0) && !set[a] && fl.reachFirst(a, j, set) {
			return false // a path into j passes no start
		}
	}
	for _, st := range starts {
		if !fl.postDominates(j, st.addr) {
			return false
		}
		if fl.search(st.addr, func(_, to uint64) bool { return to != j }, func(y uint64) bool { return set[y] }) {
			return false // a second start before j
		}
	}
	return !fl.search(j, func(_, to uint64) bool { return !set[to] }, func(y uint64) bool { return y == j })
}

// startList spells the starts' addresses.
func startList(starts []start) string {
	s := make([]string, len(starts))
	for i, st := range starts {
		s[i] = fmt.Sprintf("%#x", st.addr)
	}
	return strings.Join(s, ", ")
}

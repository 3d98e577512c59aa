package code

import (
	"sort"

	"github.com/binscope/binscope/types"
)

// Inlined is an inline expansion inside some function: the function whose
// body was inlined, and where.
type Inlined struct {
	Callee string
	Site   types.InlineSite
}

// InlinedInto returns the expansions whose caller is the function called
// caller, in entry address order.
func InlinedInto(fns []*types.Func, caller string) []Inlined {
	var out []Inlined
	for _, fn := range fns {
		for _, s := range fn.Inlined {
			if s.Caller == caller {
				out = append(out, Inlined{Callee: fn.Name, Site: *s})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Site.EntryPC < out[j].Site.EntryPC })
	return out
}

// SourceLine is one line of a function's source as WriteLines prints it.
type SourceLine struct {
	Line int
	// Addrs are the statement addresses of the line's own code; Inlines
	// the expansions called from the line.
	Addrs   []uint64
	Inlines []Inlined
}

// OwnFile is the file that holds fn's source: its declaration file, or
// the file most of its line rows name.
func OwnFile(fn *types.Func, rows []types.Line) string {
	if fn.Decl.File != "" {
		return fn.Decl.File
	}
	count := map[string]int{}
	best := ""
	for _, r := range rows {
		count[r.File]++
		if count[r.File] > count[best] {
			best = r.File
		}
	}
	return best
}

// SourceLines gathers, for each line of fn's own file from its declaration
// to its last line with code, the addresses that carry it and the inline
// expansions called from it.
func SourceLines(fn *types.Func, rows []types.Line, inl []Inlined) (file string, lines []SourceLine) {
	file = OwnFile(fn, rows)
	addrs := map[int][]uint64{}
	all := map[int][]uint64{}
	first, last := fn.Decl.Line, 0
	inlined := func(a uint64) bool {
		for _, in := range inl {
			if holds(in.Site.Ranges, a) {
				return true
			}
		}
		return false
	}
	for _, r := range rows {
		// Rows inside an expansion's ranges are the inlined body's, even
		// when it comes from the same file.
		if r.File != file || r.Line <= 0 || r.Line < fn.Decl.Line || inlined(r.Addr) {
			continue
		}
		if r.Stmt {
			addrs[r.Line] = appendNew(addrs[r.Line], r.Addr)
		}
		all[r.Line] = appendNew(all[r.Line], r.Addr)
		if first == 0 || r.Line < first {
			first = r.Line
		}
		last = max(last, r.Line)
	}
	calls := map[int][]Inlined{}
	for _, in := range inl {
		if in.Site.CallFile == file && in.Site.CallLine >= first {
			calls[in.Site.CallLine] = append(calls[in.Site.CallLine], in)
			last = max(last, in.Site.CallLine)
		}
	}
	for l := first; l <= last && l > 0; l++ {
		a := addrs[l]
		if len(a) == 0 {
			a = all[l]
		}
		lines = append(lines, SourceLine{Line: l, Addrs: a, Inlines: calls[l]})
	}
	return file, lines
}

func appendNew(s []uint64, v uint64) []uint64 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

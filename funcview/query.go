package funcview

import (
	"sort"

	"github.com/binscope/binscope/types"
)

// Span is the number of bytes the ranges cover.
func Span(rs [][2]uint64) uint64 {
	var n uint64
	for _, r := range rs {
		n += r[1] - r[0]
	}
	return n
}

// Stats is what pfunct -I says of the expansions inlined into one
// function: how many, and how many bytes of code they take.
type Stats struct {
	Caller     string
	Expansions int
	Bytes      uint64
}

// InlineStats returns, for each function that has bodies inlined into it,
// the number of expansions and their total size, largest first.
func InlineStats(fns []*types.Func) []Stats {
	by := map[string]*Stats{}
	var out []*Stats
	for _, fn := range fns {
		for _, s := range fn.Inlined {
			st := by[s.Caller]
			if st == nil {
				st = &Stats{Caller: s.Caller}
				by[s.Caller] = st
				out = append(out, st)
			}
			st.Expansions++
			st.Bytes += Span(s.Ranges)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Caller < out[j].Caller
	})
	res := make([]Stats, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res
}

// HasInlineDecl reports whether fn's language declares inlining in a way
// DWARF records (C and C++ inline), which -H and -G are about.
func HasInlineDecl(fn *types.Func) bool {
	return fn.Lang == types.LangC || fn.Lang == types.LangCPlusPlus
}

// TakesPointerTo reports whether one of fn's parameters is a pointer to the
// type called name (through typedefs and qualifiers), as pfunct -c asks.
func TakesPointerTo(fn *types.Func, name string) bool {
	for _, p := range fn.Params {
		t := types.Resolve(p.Type)
		ptr, ok := t.(*types.Pointer)
		if !ok {
			continue
		}
		if tt := types.Resolve(ptr.Target); tt != nil && (tt.TypeName() == name || types.ShortName(tt.TypeName()) == name) {
			return true
		}

	}
	return false
}

package dwarf

import (
	"fmt"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestPrunedWalkMatches: a walk that drops each unit's subprograms no
// join keeps (funcWalker.prune: C++ member functions declared in their
// classes and never defined or inlined there) gives the very functions of
// the walk that keeps every one (the oracle), on C++ (cpp-real,
// libstdc++'s debug file), C (python3.11d) and Rust, whose units refer
// to subprograms in others (DW_FORM_ref_addr).
func TestPrunedWalkMatches(t *testing.T) {
	inputs := []struct {
		path      string
		minFuncs  int
		minPruned int
		again     bool // a dropped subprogram is referred to from another unit
	}{
		{testutil.Fixture(t, "cpp-real").Path, 1000, 0, false}, // one unit, in the last span: nothing dropped
		{testutil.DebugFile(testutil.RealBinary(t, "libstdc++")), 10000, 30000, false},
		{testutil.RealBinary(t, "python3.11d"), 10000, 5000, false},
		// Its units refer to subprograms of others: none dropped.
		{testutil.Fixture(t, "rust-real").Path, 5000, 0, false},
	}
	for _, in := range inputs {
		funcs := func(o FuncOptions) ([]*types.Func, int, bool) {
			f, err := Open(in.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ws, err := f.walkSpans(o, nil, f.funcSpans(4))
			if err != nil {
				t.Fatal(err)
			}
			pruned := 0
			for _, w := range ws {
				pruned += len(w.pruned)
			}
			again := prunedUsed(ws)
			fns, err := f.functions(o)
			if err != nil {
				t.Fatal(err)
			}
			return fns, pruned, again
		}
		want, pruned, _ := funcs(FuncOptions{keepDecls: true})
		if pruned != 0 {
			t.Fatalf("%s: %d subprograms dropped keeping every one", in.path, pruned)
		}
		got, pruned, again := funcs(FuncOptions{})
		t.Logf("%s: %d functions, %d subprograms dropped, walked again: %v", in.path, len(got), pruned, again)
		if len(want) < in.minFuncs || pruned < in.minPruned || again != in.again {
			t.Errorf("%s: %d functions, %d subprograms dropped, walked again %v; want at least %d and %d, %v",
				in.path, len(want), pruned, again, in.minFuncs, in.minPruned, in.again)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d functions pruned, %d kept whole", in.path, len(got), len(want))
		}
		for i := range want {
			if g, w := funcFacts(got[i]), funcFacts(want[i]); g != w {
				t.Fatalf("%s: function %d differs:\n%s\nagainst\n%s", in.path, i, g, w)
			}
		}
	}
}

// funcFacts are what a walk and its join say of fn, as text.
func funcFacts(fn *types.Func) string {
	s := fmt.Sprintf("%s %s %v %#x %d %v %v ext=%v var=%v inl=%v", fn.Name, fn.Linkage, fn.Lang, fn.LowPC, fn.Size,
		fn.Ranges, fn.Decl, fn.External, fn.Variadic, fn.DeclaredInline)
	for _, in := range fn.Instances {
		s += fmt.Sprintf(" inst(%#x %v %d)", in.Entry, in.Ranges, len(in.Sites))
	}
	for _, site := range fn.Inlined {
		s += fmt.Sprintf(" site(%s %d:%d %#x %v %v)", site.Caller, site.CallLine, site.CallColumn, site.EntryPC, site.Ranges, site.Parent != nil)
	}
	return s
}

// TestPrunedUsed: a subprogram or an inline site referring to a dropped
// subprogram (from another unit) makes the walk run again keeping every
// subprogram; references to others do not.
func TestPrunedUsed(t *testing.T) {
	ws := func(origin, site, pruned Offset) []walked {
		return []walked{
			{order: []*subprogram{{off: 0x10, origin: origin}}, pruned: []Offset{0x40, pruned}},
			{sites: []inlined{{origin: site}}, pruned: []Offset{0x20}},
		}
	}
	for _, c := range []struct {
		origin, site, pruned Offset
		want                 bool
	}{
		{0, 0x30, 0x50, false},
		{0x50, 0x30, 0x50, true},  // a subprogram's origin dropped by its own walk
		{0x20, 0x30, 0x50, true},  // by another walk
		{0, 0x40, 0x50, true},     // an inline site's
		{0x30, 0x60, 0x50, false}, // neither dropped
	} {
		if got := prunedUsed(ws(c.origin, c.site, c.pruned)); got != c.want {
			t.Errorf("origin %#x, site %#x, dropped %#x: prunedUsed %v, want %v", c.origin, c.site, c.pruned, got, c.want)
		}
	}
}

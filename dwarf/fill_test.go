package dwarf

import (
	"fmt"
	"testing"

	"github.com/binscope/binscope/types"
)

// filledDescribed opens path and describes every function with the
// parameters Functions fills for o, on one core.
func filledDescribed(t *testing.T, path string, o FuncOptions) []string {
	defer func(c func() int) { fillCores = c }(fillCores)
	fillCores = func() int { return 1 }
	_, fns := openFunctions(t, path, o)
	return fnsDescribed(fns)
}

// openFunctions opens path, closed when t ends, and reads its functions
// with o.
func openFunctions(t *testing.T, path string, o FuncOptions) (*File, []*types.Func) {
	t.Helper()
	g, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	fns, err := g.Functions(&o)
	if err != nil {
		t.Fatal(err)
	}
	return g, fns
}

func fnsDescribed(fns []*types.Func) []string {
	var out []string
	for _, fn := range fns {
		out = append(out, fmt.Sprintf("%s %#x %s %s", fn.Name, fn.LowPC, typeDescribed(fn.Return), paramsDescribed(fn.Params)))
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) int {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d functions, want %d", what, len(got), len(want))
	}
	diff := 0
	for i := range got {
		if got[i] != want[i] {
			if diff++; diff <= 3 {
				t.Errorf("%s:\n\t%s\nwant\n\t%s", what, got[i], want[i])
			}
		}
	}
	return diff
}

// TestHelpedFillEqualsOne: functions a helper fills (fillWork.help: from
// the back of a share, with a converter of its own, here the whole share)
// get the parameters one core's fill gives them, with whole and with
// opaque types.
func TestHelpedFillEqualsOne(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, _ int) {
		for _, opaque := range []bool{false, true} {
			want := filledDescribed(t, f.Path, FuncOptions{Params: true, SpelledParams: opaque})
			// The walk's entries are recorded and the functions merged, as
			// fillAll finds them; the helper fills them all.
			g, fns := openFunctions(t, f.Path, FuncOptions{Params: true, DeferParams: true})
			pf := g.fillers[0]
			c, err := g.typeConverter()
			if err != nil {
				t.Fatal(err)
			}
			if opaque {
				c = c.another(len(fns))
				c.opaque = true
			}
			for _, fn := range fns {
				pf.done[fn] = true
			}
			fw := &fillWork{pf: pf, conv: c, shares: []fillShare{{fns: fns, hi: len(fns)}}}
			if len(fns) > 4*fillChunk {
				fw.help()
			} else { // too few to help with: filled from the back alike
				fw.err = fw.fill(c, 0, true)
			}
			if fw.err != nil {
				t.Fatal(fw.err)
			}
			if fw.helped != len(fns) {
				t.Fatalf("the helper filled %d of %d functions", fw.helped, len(fns))
			}
			diff := sameLines(t, fmt.Sprintf("opaque %v, helped", opaque), fnsDescribed(fns), want)
			if len(want) < 5 {
				t.Errorf("%d functions, want at least 5", len(want))
			}
			t.Logf("opaque %v: %d functions agree, %d differ", opaque, len(want)-diff, diff)
		}
	})
}

// TestOpaqueParamsSpellAlike: with SpelledParams, parameter and result
// types spell as they do whole (C and C++ composites by name, the others
// whole), and at least three inputs have parameters of a composite whose
// members were left unread (none, where the whole walk has some).
func TestOpaqueParamsSpellAlike(t *testing.T) {
	withOpaque := 0
	eachScanInput(t, func(t *testing.T, f *File, _ int) {
		whole := filledDescribed(t, f.Path, FuncOptions{Params: true})
		_, wholeFns := openFunctions(t, f.Path, FuncOptions{Params: true})
		_, fns := openFunctions(t, f.Path, FuncOptions{Params: true, SpelledParams: true})
		type paramKey struct {
			name string
			pc   uint64
			i    int
		}
		members := func(p types.Param) int {
			if s, ok := types.Resolve(types.Unqualified(p.Type)).(*types.Struct); ok {
				return len(s.Members)
			}
			return -1
		}
		had := map[paramKey]int{}
		for _, fn := range wholeFns {
			for i, p := range fn.Params {
				had[paramKey{fn.Name, fn.LowPC, i}] = members(p)
			}
		}
		opaque := 0
		for _, fn := range fns {
			for i, p := range fn.Params {
				if members(p) == 0 && had[paramKey{fn.Name, fn.LowPC, i}] > 0 {
					opaque++
				}
			}
		}
		if opaque > 0 {
			withOpaque++
		}
		diff := sameLines(t, "opaque", fnsDescribed(fns), whole)
		t.Logf("%d functions agree, %d differ; %d parameters of an opaque type", len(whole)-diff, diff, opaque)
	})
	if withOpaque < 3 {
		t.Errorf("%d inputs with opaque parameter types, want at least 3", withOpaque)
	}
}

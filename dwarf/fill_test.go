package dwarf

import (
	"fmt"
	"testing"

	"github.com/binscope/binscope/types"
)

// filledDescribed opens path and describes every function with the
// parameters Functions fills for o.
func filledDescribed(t *testing.T, path string, o FuncOptions) []string {
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

package dwarf_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// truthFixtures are the fixtures whose binaries print their own layouts
// (see testdata/fixtures/*/ and testutil.TruthType). noAlign skips the
// alignment check where the debug info cannot carry it: DWARF 2 has no
// DW_AT_alignment, so aligned(64) is invisible there.
var truthFixtures = []struct {
	name    string
	noAlign bool
}{
	{name: "c-layouts"},
	{name: "c-layouts-dwarf2", noAlign: true},
	{name: "cpp-layouts"},
	{name: "go-layouts"},
	{name: "go-prom"},
	{name: "rust-layouts"},
	{name: "zig-layouts"},
}

// TestTruth loads every fixture with the DWARF loader and requires each
// type the fixture's own language reported to be there with the same size,
// alignment, member offsets and sizes, and bitfield positions; then, for
// plain structs, that package layout finds the holes and tail padding the
// truth's offsets imply.
func TestTruth(t *testing.T) {
	for _, fx := range truthFixtures {
		t.Run(fx.name, func(t *testing.T) {
			b := testutil.Fixture(t, fx.name)
			truth := b.Truth(t)
			spec, err := dwarf.Load(b.Path, nil)
			if err != nil {
				t.Fatalf("Load(%s): %v", b.Path, err)
			}
			if spec.Format != "dwarf" {
				t.Errorf("Spec.Format = %q, want dwarf", spec.Format)
			}
			for _, tt := range truth {
				got, problems := testutil.CheckTruth(spec, tt, !fx.noAlign)
				if len(problems) > 0 {
					t.Errorf("%s:\n\t%s", tt.Name, strings.Join(problems, "\n\t"))
					continue
				}
				if s, ok := got.(*types.Struct); ok {
					if p := checkHoles(s, tt); p != "" {
						t.Errorf("%s: %s", tt.Name, p)
					}
				}
			}
		})
	}
}

// TestTruthFind resolves names as a user types them on real binaries.
func TestTruthFind(t *testing.T) {
	cases := []struct{ fixture, query, want string }{
		{"go-prom", "github.com/prometheus/client_golang/prometheus.counter", "github.com/prometheus/client_golang/prometheus.counter"},
		{"go-prom", "prometheus.counter", "github.com/prometheus/client_golang/prometheus.counter"},
		{"go-layouts", "main.Pair[int,string]", "main.Pair[int,string]"},
		{"go-layouts", "Pair[int,string]", "main.Pair[int,string]"},
		{"go-layouts", "example.com/fixture/inner.T", "example.com/fixture/inner.T"},
		{"rust-layouts", "layouts::Holey", "layouts::Holey"},
		{"rust-layouts", "Generic<u32>", "layouts::Generic<u32>"},
		{"rust-layouts", "inner::T", "layouts::inner::T"},
		{"cpp-layouts", "ns::Box<int>", "ns::Box<int>"},
		{"zig-layouts", "layouts.Gen(u32)", "layouts.Gen(u32)"},
		{"c-layouts", "holey", "holey"},
	}
	specs := map[string]*types.Spec{}
	for _, c := range cases {
		spec := specs[c.fixture]
		if spec == nil {
			b := testutil.Fixture(t, c.fixture)
			var err error
			if spec, err = dwarf.Load(b.Path, nil); err != nil {
				t.Fatalf("Load(%s): %v", b.Path, err)
			}
			specs[c.fixture] = spec
		}
		ts, err := spec.Find(c.query)
		if err != nil {
			t.Errorf("%s: Find(%q): %v", c.fixture, c.query, err)
			continue
		}
		for _, ty := range ts {
			if ty.TypeName() != c.want {
				t.Errorf("%s: Find(%q) = %q, want %q", c.fixture, c.query, ty.TypeName(), c.want)
			}
		}
	}
}

// checkHoles computes holes and tail padding from the truth alone (members
// sorted by offset, a hole wherever one ends before the next begins, the
// tail from the end of the last to the size) and compares them with what
// package layout finds. Types the truth cannot speak for (unions, bitfields,
// enum variants, overlapping members) are skipped.
func checkHoles(s *types.Struct, tt testutil.TruthType) string {
	if s.Kind == types.KindUnion || s.Variants != nil || len(tt.Members) == 0 {
		return ""
	}
	ms := append([]testutil.TruthMember(nil), tt.Members...)
	for _, m := range ms {
		if m.BitOffset != nil {
			return ""
		}
	}
	// The language's own report has no name for a C++ vtable pointer;
	// take it, and other artificial members, from the debug info.
	for _, m := range s.Members {
		if m.Artificial {
			size, _ := types.Sizeof(m.Type)
			ms = append(ms, testutil.TruthMember{Name: m.Name, Offset: m.Offset.Bytes(), Size: size})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Offset < ms[j].Offset })
	var want []layout.Hole
	end := int64(0)
	for _, m := range ms {
		if m.Offset < end {
			return "" // overlapping members: the truth cannot say
		}
		if m.Offset > end {
			want = append(want, layout.Hole{Offset: end, Size: m.Offset - end})
		}
		end = m.Offset + m.Size
	}
	l, err := layout.Analyze(s, nil)
	if err != nil {
		return fmt.Sprintf("layout.Analyze: %v", err)
	}
	if fmt.Sprint(l.Holes) != fmt.Sprint(want) {
		return fmt.Sprintf("holes %v, want %v", l.Holes, want)
	}
	if l.Padding != tt.Size-end {
		return fmt.Sprintf("padding %d, want %d", l.Padding, tt.Size-end)
	}
	return ""
}

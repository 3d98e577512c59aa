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
				got, problems := findType(spec, tt, !fx.noAlign)
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

// findType looks tt up by its exact name and compares it with every
// definition found; it returns the one that matches, or the problems of the
// closest one.
func findType(spec *types.Spec, tt testutil.TruthType, checkAlign bool) (types.Type, []string) {
	found := spec.Lookup(tt.Name)
	if len(found) == 0 {
		msg := fmt.Sprintf("not found among %d types", spec.Len())
		if near := spec.Closest(tt.Name, 3); len(near) > 0 {
			msg += " (closest: " + strings.Join(near, ", ") + ")"
		}
		return nil, []string{msg}
	}
	var best []string
	for i, f := range found {
		r := types.Resolve(f)
		p := compare(r, tt, checkAlign)
		if len(p) == 0 {
			return r, nil
		}
		if i == 0 || len(p) < len(best) {
			best = p
		}
	}
	if len(found) > 1 {
		best = append(best, fmt.Sprintf("(%d definitions with this name, none matches)", len(found)))
	}
	return nil, best
}

// flatMember is a member with its offset from the outermost type, found
// through anonymous struct and union members as C names them.
type flatMember struct {
	m      *types.Member
	offset types.Bits
	used   bool
}

func flatten(s *types.Struct, base types.Bits, depth int, out *[]*flatMember) {
	if depth > types.MaxDepth {
		return
	}
	for i := range s.Members {
		m := &s.Members[i]
		if m.Name == "" && !m.Embedded {
			if in, ok := types.Resolve(m.Type).(*types.Struct); ok && in.Name == "" {
				flatten(in, base+m.Offset, depth+1, out)
				continue
			}
		}
		*out = append(*out, &flatMember{m: m, offset: base + m.Offset})
	}
}

func compare(got types.Type, tt testutil.TruthType, checkAlign bool) []string {
	var p []string
	size, err := types.Sizeof(got)
	if err != nil {
		p = append(p, fmt.Sprintf("size: %v", err))
	} else if size != tt.Size {
		p = append(p, fmt.Sprintf("size %d, want %d", size, tt.Size))
	}
	if a := types.Alignof(got); checkAlign && tt.Align > 0 && a != tt.Align {
		p = append(p, fmt.Sprintf("align %d, want %d", a, tt.Align))
	}
	if len(tt.Members) == 0 {
		return p
	}
	s, ok := got.(*types.Struct)
	if !ok {
		return append(p, fmt.Sprintf("is %T, want a struct with %d members", got, len(tt.Members)))
	}
	var flat []*flatMember
	flatten(s, 0, 0, &flat)
	for _, tm := range tt.Members {
		fm, off := lookupMember(s, flat, tm.Name)
		if fm == nil {
			p = append(p, fmt.Sprintf("member %s missing", tm.Name))
			continue
		}
		msize, err := types.Sizeof(fm.Type)
		if err != nil {
			p = append(p, fmt.Sprintf("member %s: size: %v", tm.Name, err))
		} else if msize != tm.Size {
			p = append(p, fmt.Sprintf("member %s: size %d, want %d", tm.Name, msize, tm.Size))
		}
		if tm.BitOffset != nil {
			if off != types.Bits(*tm.BitOffset) || fm.BitSize != types.Bits(tm.BitSize) {
				p = append(p, fmt.Sprintf("member %s: bits %d+%d, want %d+%d", tm.Name, off, fm.BitSize, *tm.BitOffset, tm.BitSize))
			}
			continue
		}
		if off%8 != 0 || off.Bytes() != tm.Offset || fm.BitSize != 0 {
			p = append(p, fmt.Sprintf("member %s: offset %d bits (bit size %d), want byte %d", tm.Name, off, fm.BitSize, tm.Offset))
		}
	}
	for _, f := range flat {
		if !f.used && !f.m.Artificial {
			p = append(p, fmt.Sprintf("member %q at bit %d is not in the truth", f.m.Name, f.offset))
		}
	}
	return p
}

// lookupMember finds a truth member among the flattened members: by name
// (the first not yet used, for Go's repeated "_"), by the type name of a
// base class or embedded field, or as "Variant.field" in a Rust enum's
// variant part. It returns the member and its bit offset from the type.
func lookupMember(s *types.Struct, flat []*flatMember, name string) (*types.Member, types.Bits) {
	for _, f := range flat {
		if !f.used && f.m.Name == name {
			f.used = true
			return f.m, f.offset
		}
	}
	for _, f := range flat {
		if !f.used && f.m.Embedded && (f.m.Type.TypeName() == name || types.Resolve(f.m.Type).TypeName() == name) {
			f.used = true
			return f.m, f.offset
		}
	}
	variant, field, ok := strings.Cut(name, ".")
	if !ok || s.Variants == nil {
		return nil, 0
	}
	for i := range s.Variants.Variants {
		vm := &s.Variants.Variants[i].Member
		if vm.Name != variant {
			continue
		}
		vs, ok := types.Resolve(vm.Type).(*types.Struct)
		if !ok {
			return nil, 0
		}
		for j := range vs.Members {
			if vs.Members[j].Name == field {
				return &vs.Members[j], vm.Offset + vs.Members[j].Offset
			}
		}
	}
	return nil, 0
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

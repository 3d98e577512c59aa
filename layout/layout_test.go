package layout_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// These tests build types by hand for what no compiler emits (corrupt
// sizes, cycles) and for the parts of the API the fixtures exercise only
// indirectly. Layouts the compilers produce are checked against the
// compilers in reorg_test.go, gocheck_test.go and pahole_test.go.

var (
	u8  = &types.Base{Name: "u8", ByteSize: 1}
	u16 = &types.Base{Name: "u16", ByteSize: 2}
	u32 = &types.Base{Name: "u32", ByteSize: 4}
	u64 = &types.Base{Name: "u64", ByteSize: 8}
)

func member(name string, t types.Type, byteOffset int64) types.Member {
	return types.Member{Name: name, Type: t, Offset: types.Bits(byteOffset * 8)}
}

func mustAnalyze(t *testing.T, s *types.Struct, opts *layout.Options) *layout.Layout {
	t.Helper()
	l, err := layout.Analyze(s, opts)
	if err != nil {
		t.Fatalf("Analyze(%s): %v", s.Name, err)
	}
	return l
}

func TestAnalyzeErrors(t *testing.T) {
	if _, err := layout.Analyze(nil, nil); err == nil {
		t.Error("Analyze(nil) succeeded")
	}
	_, err := layout.Analyze(&types.Struct{Name: "fwd", Incomplete: true}, nil)
	if !errors.Is(err, layout.ErrIncomplete) {
		t.Errorf("Analyze(declaration) = %v, want ErrIncomplete", err)
	}
	if _, err := layout.Analyze(&types.Struct{Name: "huge", ByteSize: 1 << 50}, nil); err == nil {
		t.Error("Analyze(absurd size) succeeded")
	}
	neg := &types.Struct{Name: "neg", ByteSize: 8, Members: []types.Member{{Name: "a", Type: u8, Offset: -8}}}
	if _, err := layout.Analyze(neg, nil); err == nil {
		t.Error("Analyze(negative offset) succeeded")
	}
	// An anonymous struct that holds itself by value: a cycle a loader
	// failed to break.
	loop := &types.Struct{ByteSize: 8}
	loop.Members = []types.Member{{Name: "self", Type: loop}}
	if _, err := layout.Analyze(loop, nil); !errors.Is(err, types.ErrCycle) {
		t.Errorf("Analyze(cycle) = %v, want ErrCycle", err)
	}
	arr := &types.Array{Elem: u64, Count: 1 << 60}
	if _, err := layout.Analyze(&types.Struct{Name: "big", ByteSize: 8, Members: []types.Member{member("a", arr, 0)}}, nil); err == nil {
		t.Error("Analyze(overflowing array) succeeded")
	}
}

// TestWarning: members beyond the size break the invariant; the layout
// says so and the text shows pahole's alert.
func TestWarning(t *testing.T) {
	s := &types.Struct{Name: "broken", ByteSize: 8, Lang: types.LangC, Members: []types.Member{
		member("a", u64, 0), member("b", u64, 4),
	}}
	l := mustAnalyze(t, s, nil)
	if l.Warning == "" || l.Invariant() == nil {
		t.Fatalf("no warning for overlapping members beyond the size: %+v", l)
	}
	var b bytes.Buffer
	if err := layout.WriteText(&b, l, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "BRAIN FART ALERT!") {
		t.Errorf("text lacks the alert:\n%s", b.String())
	}
	var j bytes.Buffer
	if err := layout.WriteJSON(&j, []*layout.Layout{l}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"warning"`) {
		t.Errorf("JSON lacks the warning:\n%s", j.String())
	}
}

// TestRustEnum: a tag and variants overlap; a hole is a byte no variant
// nor the tag covers.
func TestRustEnum(t *testing.T) {
	a := &types.Struct{Name: "e::A", ByteSize: 16, Lang: types.LangRust, Members: []types.Member{member("__0", u32, 4)}}
	b := &types.Struct{Name: "e::B", ByteSize: 16, Lang: types.LangRust, Members: []types.Member{member("__0", u8, 1)}}
	tag := member("", u8, 0)
	e := &types.Struct{Name: "e::E", ByteSize: 16, Lang: types.LangRust, Variants: &types.VariantPart{
		Tag: &tag,
		Variants: []types.Variant{
			{Discr: 0, Member: member("A", a, 0)},
			{Discr: 1, Member: member("B", b, 0)},
		},
	}}
	l := mustAnalyze(t, e, nil)
	if len(l.Holes) != 1 || l.Holes[0] != (layout.Hole{Offset: 2, Size: 2}) {
		t.Errorf("holes %+v, want [{2 2}]", l.Holes)
	}
	if l.Padding != 8 || l.SumMembers != 6 || l.Invariant() != nil {
		t.Errorf("padding %d, members %d: %v", l.Padding, l.SumMembers, l.Invariant())
	}
	if len(l.Variants) != 2 || l.Variants[0].Members[0].Offset != 4 || l.Tag == nil {
		t.Errorf("variants %+v", l.Variants)
	}
	r := layout.Reorganize(l, nil)
	if r.Moved || !r.CompilerReorders {
		t.Errorf("enum reorganized: %+v", r)
	}
	for _, native := range []bool{false, true} {
		var out bytes.Buffer
		if err := layout.WriteText(&out, l, &layout.PrintOptions{Native: native}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"enum e::E {", "discr: 1", "XXX 2 bytes hole at offset 2"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("native=%v: %q missing from\n%s", native, want, out.String())
			}
		}
	}
	var j bytes.Buffer
	if err := layout.WriteJSON(&j, []*layout.Layout{l}, nil); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(j.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got[0]["kind"] != "enum" || len(got[0]["variants"].([]any)) != 2 {
		t.Errorf("JSON %s", j.String())
	}
}

// TestUnion: members overlap, no holes; the padding is what the largest
// member leaves.
func TestUnion(t *testing.T) {
	u := &types.Struct{Name: "u", Kind: types.KindUnion, ByteSize: 8, Lang: types.LangC, Members: []types.Member{
		member("a", u32, 0), member("b", &types.Array{Elem: u8, Count: 6}, 0),
	}}
	l := mustAnalyze(t, u, nil)
	if len(l.Holes) != 0 || l.Padding != 2 || l.SumMembers != 6 || l.Invariant() != nil {
		t.Errorf("%v", l)
	}
	if r := layout.Reorganize(l, nil); r.Moved || r.Note == "" {
		t.Errorf("union reorganized: %+v", r)
	}
}

// TestReorganizeRules covers what stays in place: C++ bases and vtable
// pointers first, a flexible array last; Go's zero-size fields first.
func TestReorganizeRules(t *testing.T) {
	base := &types.Struct{Name: "B", ByteSize: 1, Lang: types.LangCPlusPlus, Members: []types.Member{member("c", u8, 0)}}
	vptr := &types.Pointer{ByteSize: 8, Target: &types.Void{}}
	flex := &types.Array{Elem: u64, Count: -1}
	s := &types.Struct{Name: "C", ByteSize: 32, Lang: types.LangCPlusPlus, Members: []types.Member{
		{Name: "_vptr", Type: vptr, Artificial: true},
		{Name: "B", Type: base, Offset: 64, Embedded: true},
		member("x", u64, 16),
		member("y", u8, 24),
		member("data", flex, 32),
	}}
	s.ByteSize = 32
	l := mustAnalyze(t, s, nil)
	r := layout.Reorganize(l, nil)
	if !r.Moved || r.Saved() != 8 {
		t.Fatalf("saved %d, moved %v", r.Saved(), r.Moved)
	}
	var order []string
	for i := range r.Layout.Members {
		order = append(order, r.Layout.Members[i].Name())
	}
	if got := strings.Join(order, " "); got != "_vptr B y x data" && got != "_vptr B x y data" {
		t.Errorf("order %s", got)
	}
	if last := r.Layout.Members[len(r.Layout.Members)-1]; last.Name() != "data" {
		t.Errorf("flexible array moved: %s last", last.Name())
	}

	empty := &types.Struct{Name: "struct {}", Lang: types.LangGo, GoKind: types.GoStruct}
	g := &types.Struct{Name: "main.T", ByteSize: 24, Lang: types.LangGo, GoKind: types.GoStruct, Members: []types.Member{
		member("A", u8, 0), member("B", u64, 8), member("Z", empty, 16),
	}}
	gl := mustAnalyze(t, g, nil)
	gr := layout.Reorganize(gl, nil)
	if !gr.Moved || gr.Layout.Members[0].Name() != "Z" || gr.Layout.Size != 16 {
		t.Errorf("Go order: first %s, size %d", gr.Layout.Members[0].Name(), gr.Layout.Size)
	}
}

// TestRustReorderRule: a Rust struct out of declaration order was
// reordered by the compiler; one in declaration order with avoidable holes
// is taken for repr(C).
func TestRustReorderRule(t *testing.T) {
	reordered := &types.Struct{Name: "r::A", ByteSize: 16, Lang: types.LangRust, Members: []types.Member{
		member("a", u8, 8), member("b", u64, 0),
	}}
	r := layout.Reorganize(mustAnalyze(t, reordered, nil), nil)
	if r.Moved || !r.CompilerReorders || !strings.Contains(r.Note, "repr(Rust)") {
		t.Errorf("reordered struct: %+v", r)
	}
	declared := &types.Struct{Name: "r::C", ByteSize: 24, Lang: types.LangRust, Members: []types.Member{
		member("a", u8, 0), member("b", u64, 8), member("c", u8, 16),
	}}
	r = layout.Reorganize(mustAnalyze(t, declared, nil), nil)
	if !r.Moved || r.Saved() != 8 || !strings.Contains(r.Note, "repr(C)") {
		t.Errorf("repr(C) struct: saved %d, %+v", r.Saved(), r)
	}
}

// TestBoundaries: which member starts at or crosses each cacheline.
func TestBoundaries(t *testing.T) {
	s := &types.Struct{Name: "b", ByteSize: 96, Lang: types.LangC, Members: []types.Member{
		member("a", &types.Array{Elem: u8, Count: 40}, 0),
		member("b", u64, 40),
		member("c", &types.Array{Elem: u8, Count: 20}, 48),
		member("d", u64, 72),
	}}
	l := mustAnalyze(t, s, &layout.Options{CachelineSize: 32})
	want := []layout.Boundary{
		{Line: 1, Offset: 32, Member: 0, Crosses: true},
		{Line: 2, Offset: 64, Member: 2, Crosses: true},
	}
	if len(l.Boundaries) != 2 || l.Boundaries[0] != want[0] || l.Boundaries[1] != want[1] {
		t.Errorf("boundaries %+v, want %+v", l.Boundaries, want)
	}
	if l.Cachelines != 3 || l.CachelineSize != 32 {
		t.Errorf("cachelines %d of %d", l.Cachelines, l.CachelineSize)
	}
}

// TestPrintOptions: -I prints the declaration, --hex the offsets in hex.
func TestPrintOptions(t *testing.T) {
	s := &types.Struct{Name: "d", ByteSize: 16, Lang: types.LangC, Decl: types.Decl{File: "x.c", Line: 3},
		Members: []types.Member{member("a", u8, 0), member("b", u64, 8)}}
	l := mustAnalyze(t, s, nil)
	var b bytes.Buffer
	if err := layout.WriteText(&b, l, &layout.PrintOptions{DeclInfo: true, Hex: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "/* x.c:3 */\nstruct d {\n") || !strings.Contains(b.String(), "/*   0x8   0x8 */") {
		t.Errorf("got\n%s", b.String())
	}
	g := &types.Struct{Name: "main.D", ByteSize: 16, Lang: types.LangGo, Decl: types.Decl{File: "x.go", Line: 3},
		Members: []types.Member{member("A", u8, 0), member("B", u64, 8)}}
	b.Reset()
	if err := layout.WriteText(&b, mustAnalyze(t, g, nil), &layout.PrintOptions{DeclInfo: true, Native: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "// x.go:3\ntype main.D struct {\n\tA u8  // offset 0, size 1\n") {
		t.Errorf("got\n%s", b.String())
	}
	var sz bytes.Buffer
	if err := layout.WriteSizes(&sz, l); err != nil || sz.String() != "d\t16\t1\n" {
		t.Errorf("sizes %q, %v", sz.String(), err)
	}
}

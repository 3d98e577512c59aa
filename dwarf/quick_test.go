package dwarf

import (
	"debug/dwarf"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/binscope/binscope/types"
)

// TestQuickEntriesAgreeWithReader: every subprogram and inline site a
// functions walk decodes from the scan's bytes has the fields, values and
// classes debug/dwarf's Reader decodes at that offset, and the ranges
// debug/dwarf's Data.Ranges gives; every formal parameter, read without
// an entry, is what the Reader's entry gives; at least 90% of them are decoded
// so on every input.
func TestQuickEntriesAgreeWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		de := f.dieEntries(funcWalk)
		r := f.oracle().Reader()
		var quick, slow, ranged, params int
		forms := map[Class]int{}
		for {
			e, err := de.next(true)
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			if e.Tag != TagSubprogram && e.Tag != TagInlinedSubroutine && e.Tag != TagFormalParameter {
				continue
			}
			if e.Tag == TagFormalParameter {
				got, err := de.param(e)
				if err != nil {
					t.Fatalf("parameter %#x: %v", e.Offset, err)
				}
				quick++
				params++
				r.Seek(dwarf.Offset(e.Offset))
				want, err := r.Next()
				if err != nil || want == nil {
					t.Fatalf("Reader at %#x: %v", e.Offset, err)
				}
				if g, w := paramsText([]param{got}), paramsText([]param{paramOf(f.fromReader(want))}); g != w {
					t.Fatalf("parameter %#x: quick %s, from the Reader's entry %s", e.Offset, g, w)
				}
				continue
			}
			if e != &de.quickE {
				slow++
				continue
			}
			quick++
			r.Seek(dwarf.Offset(e.Offset))
			want, err := r.Next()
			if err != nil || want == nil {
				t.Fatalf("Reader at %#x: %v", e.Offset, err)
			}
			g, w := toReader(e), toReader(f.fromReader(want))
			if w.Tag != g.Tag || w.Children != g.Children || (len(w.Field)+len(g.Field) > 0 && !reflect.DeepEqual(w.Field, g.Field)) {
				t.Fatalf("DIE %#x:\n\tquick  %v %v\n\tReader %v %v", e.Offset, g.Tag, g.Field, w.Tag, w.Field)
			}
			for _, fl := range e.Field {
				forms[fl.Class()]++
			}
			got, gerr := de.ranges(e)
			wantR, werr := f.oracle().Ranges(want)
			if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, wantR) {
				t.Fatalf("DIE %#x ranges: quick %v %v, Data.Ranges %v %v", e.Offset, got, gerr, wantR, werr)
			}
			if e.AttrField(AttrRanges) != nil {
				ranged++
			}
		}
		t.Logf("%d entries decoded quickly (%d parameters, %d with DW_AT_ranges), %d by debug/dwarf; classes %v", quick, params, ranged, slow, forms)
		if quick < min/100 || quick < 10 || slow*10 > quick+slow {
			t.Errorf("%d entries decoded quickly and %d by debug/dwarf: want at least %d, and 90%% quickly", quick, slow, max(min/100, 10))
		}
	})
}

// TestSplitWalkEqualsOneWalk: a functions walk cut into spans, on one core
// each, finds the subprograms and inline sites one walk over the whole
// section finds, in the same order with the same attributes, however many
// spans; a C++ program of one unit is cut inside that unit.
func TestSplitWalkEqualsOneWalk(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		one, err := f.walkSpans(FuncOptions{Params: true}, nil, []span{{}})
		if err != nil {
			t.Fatal(err)
		}
		want := describeWalk(one)
		for _, n := range []int{2, 3, 7} {
			spans := f.funcSpans(n)
			if len(spans) == 1 {
				if len(f.Debug.DWARFSection(".debug_info")) >= 2*minSpan {
					t.Errorf("%d cores: one span of a .debug_info of %d bytes", n, len(f.Debug.DWARFSection(".debug_info")))
				}
				continue
			}
			inside := false
			for _, sp := range spans {
				inside = inside || sp.start > sp.unit
			}
			ws, err := f.walkSpans(FuncOptions{Params: true}, nil, spans)
			if err != nil {
				t.Fatalf("%d spans: %v", len(spans), err)
			}
			got := describeWalk(ws)
			if len(got) != len(want) {
				t.Fatalf("%d spans %+v: %d entries, one walk %d", len(spans), spans, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%d spans %+v: entry %d:\n\tsplit %s\n\tone   %s", len(spans), spans, i, got[i], want[i])
				}
			}
			t.Logf("%d spans (a cut inside a unit: %v): %d entries agree", len(spans), inside, len(got))
			if unitCount(f) == 1 && !inside {
				t.Errorf("%d spans of a program of one unit, none cut inside it", len(spans))
			}
		}
		if len(want) < 5 {
			t.Errorf("%d entries, want at least 5", len(want))
		}
	})
}

// describeWalk is every subprogram, then every inline site, of a walk's
// spans as text.
func describeWalk(ws []walked) []string {
	var out []string
	for _, w := range ws {
		for _, s := range w.order {
			line := fmt.Sprintf("sub %#x %#x %q %q %q %v %v %+v %v %v lang=%v",
				s.off, s.origin, s.scope, s.name, s.linkage, s.external, s.inline, s.decl(), s.variadic,
				instText(s.inst), s.lang)
			if p := s.subParams; p != nil {
				line += fmt.Sprintf(" type=%#x fb=%x params=%+v", p.typ, p.frameBase, paramsText(p.params))
			}
			out = append(out, line)
		}
	}
	for _, w := range ws {
		for _, in := range w.sites {
			parent := uint64(0)
			if in.site.Parent != nil {
				parent = in.site.Parent.EntryPC
			}
			out = append(out, fmt.Sprintf("site %#x %#x %s:%d:%d %#x %v parent %#x", in.origin, in.caller,
				in.site.CallFile, in.site.CallLine, in.site.CallColumn, in.site.EntryPC, in.site.Ranges, parent))
		}
	}
	return out
}

// unitCount is the number of units in f's .debug_info.
func unitCount(f *File) int {
	sc := f.newScan()
	n := 0
	for sc.pos < len(sc.info) {
		if _, err := sc.header(); err != nil {
			return -1
		}
		sc.skipUnit()
		n++
	}
	return n
}

func instText(in *types.Instance) string {
	if in == nil {
		return "no code"
	}
	return fmt.Sprintf("entry %#x %v sites %d", in.Entry, in.Ranges, len(in.Sites))
}

func paramsText(ps []param) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "(%#x %q %#x %#x %v %+v %v", p.off, p.name, p.typ, p.origin, p.result, p.loc, p.hasLoc)
		if p.konst != nil {
			fmt.Fprintf(&b, " const %d", *p.konst)
		}
		b.WriteString(")")
	}
	return b.String()
}

func paramsDescribed(ps []types.Param) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "(%s %s %v %#x %s)", p.Name, typeDescribed(p.Type), p.Result, p.PC, p.Loc.String())
	}
	return b.String()
}

// typeDescribed is a type's declaration and size ("?" for none).
func typeDescribed(t types.Type) string {
	if t == nil {
		return "-"
	}
	size, err := types.Sizeof(t)
	if err != nil {
		return types.TypeString(t) + " size ?"
	}
	return fmt.Sprintf("%s size %d", types.TypeString(t), size)
}

// TestQuickAttrsAgreeWithReader: a typed walk reads every subprogram's and
// inline site's attributes from the scan's bytes (quickAttrs) as attrsOf
// reads them from debug/dwarf's entry, and the ranges and entry address
// they give are debug/dwarf's Data.Ranges and the entry's entryPCOf.
func TestQuickAttrsAgreeWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		de := f.dieEntries(funcWalk)
		de.typed = true
		r := f.oracle().Reader()
		var typed, ranged, entryPCs int
		for {
			e, err := de.next(false)
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			if e.Tag != TagSubprogram && e.Tag != TagInlinedSubroutine {
				continue
			}
			a, err := de.attrs(e)
			if err != nil {
				t.Fatalf("DIE %#x: %v", e.Offset, err)
			}
			typed++
			r.Seek(dwarf.Offset(e.Offset))
			want, err := r.Next()
			if err != nil || want == nil {
				t.Fatalf("Reader at %#x: %v", e.Offset, err)
			}
			// The strings as read when needed.
			a.name, a.linkage, a.mipsLinkage = lazyStr(a.name.String()), lazyStr(a.linkage.String()), lazyStr(a.mipsLinkage.String())
			if w := attrsOf(f.fromReader(want)); !reflect.DeepEqual(a, w) {
				t.Fatalf("DIE %#x:\n\tquick  %+v\n\tReader %+v", e.Offset, a, w)
			}
			got, gerr := de.attrRanges(e, a, nil)
			wantR, werr := f.oracle().Ranges(want)
			if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, wantR) {
				t.Fatalf("DIE %#x ranges: quick %v %v, Data.Ranges %v %v", e.Offset, got, gerr, wantR, werr)
			}
			if g, w := a.entryPC(got), f.entryPCOf(f.fromReader(want)); g != w {
				t.Fatalf("DIE %#x entry: quick %#x, entryPCOf %#x", e.Offset, g, w)
			}
			if a.hasRanges {
				ranged++
			}
			if a.entry.kind != pcNone {
				entryPCs++
			}
		}
		t.Logf("%d subprograms and inline sites read typed (%d with DW_AT_ranges, %d with DW_AT_entry_pc)", typed, ranged, entryPCs)
		if typed < max(min/100, 5) {
			t.Errorf("%d read typed: want at least %d", typed, max(min/100, 5))
		}
	})
}

// TestDefinitionsAgreeWithReader: the index's map of C++ class
// definitions (what declarations resolve to) holds, for every struct, class
// and union the Reader decodes as a named definition, its name in its scope
// at the first such offset; every offset it holds is such a definition.
// The declaration flags are read from the scan's bytes.
func TestDefinitionsAgreeWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		ix, err := f.index()
		if err != nil {
			t.Fatal(err)
		}
		r := f.oracle().Reader()
		read := func(off Offset) *dwarf.Entry {
			r.Seek(dwarf.Offset(off))
			e, err := r.Next()
			if err != nil || e == nil {
				t.Fatalf("Reader at %#x: %v", off, err)
			}
			return e
		}
		defs, decls := 0, 0
		ix.nodes.each(func(off Offset, n *node) {
			if n.lang != types.LangCPlusPlus || (n.tag != TagStructType && n.tag != TagClassType && n.tag != TagUnionType) {
				return
			}
			e := read(off)
			name, named := e.Val(dwarf.AttrName).(string)
			if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl || !named {
				decls++
				return
			}
			defs++
			k := defKeyOf(n.tag, n.scope, name)
			if got, ok := ix.defs[k]; !ok || got > off {
				t.Fatalf("definition %#x of %+v: the map has %#x (%v)", off, k, got, ok)
			}
		})
		for k, off := range ix.defs {
			e := read(off)
			name, _ := e.Val(dwarf.AttrName).(string)
			if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl || k.name != name || k.union != (Tag(e.Tag) == TagUnionType) {
				t.Fatalf("%+v maps to %#x, %q (a declaration: %v)", k, off, name, decl)
			}
		}
		t.Logf("%d C++ class definitions (%d names), %d declarations or unnamed", defs, len(ix.defs), decls)
		// With type units, .debug_info declares the classes that
		// .debug_types defines.
		cpp := strings.HasPrefix(t.Name(), "TestDefinitionsAgreeWithReader/cpp") || strings.HasSuffix(t.Name(), "libstdc++")
		if cpp && !strings.HasSuffix(t.Name(), "-types") && (defs < 100 || decls < 10) {
			t.Errorf("%d definitions and %d declarations: a C++ input has at least 100 and 10", defs, decls)
		}
	})
}

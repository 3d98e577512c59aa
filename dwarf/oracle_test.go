package dwarf

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/types"
)

// The oracles of the scan: the type index and the functions walk built
// over debug/dwarf's Reader, every entry decoded by it, through the same
// indexer and walker the scan feeds.

// readerIndex is the type index one pass of debug/dwarf's Reader builds.
func readerIndex(t *testing.T, f *File) *index {
	t.Helper()
	b := &indexer{f: f, ix: &index{}}
	r := f.entries()
	for {
		e, err := r.next()
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if e == nil {
			return b.ix
		}
		skip, err := b.add(e, false)
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if skip && e.Children {
			r.r.SkipChildren()
		}
	}
}

// readerFunctions is Functions over debug/dwarf's Reader: its entries'
// attributes read by attrsOf and paramOf, their ranges by Data.Ranges.
func readerFunctions(t *testing.T, f *File, o FuncOptions) []*types.Func {
	t.Helper()
	fw := &funcWalker{f: f, o: o, r: f.dieEntries(funcWalk), rel: f.ELF.Type == elf.ET_REL}
	r := f.entries()
	var stack []funcFrame
	var cur funcFrame
	for {
		e, err := r.next()
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
		if e == nil {
			break
		}
		if err := fw.step(e, nil, &stack, &cur); err != nil {
			t.Fatalf("Reader: DIE %#x: %v", e.Offset, err)
		}
	}
	fns, err := f.joinWalks(o, []walked{fw.out})
	if err != nil {
		t.Fatal(err)
	}
	return fns
}

// readerLocal indexes the type DIE at off of unit u into ix, every entry
// of it decoded by debug/dwarf's Reader: File.local's oracle.
func readerLocal(t *testing.T, f *File, ix *index, u int, off dwarf.Offset) *node {
	t.Helper()
	r := f.Data.Reader()
	r.Seek(off)
	b := &indexer{f: f, ix: ix, unit: int32(u), local: true, cur: frame{lang: ix.units[u].lang}}
	for first := true; first || len(b.stack) > 0; first = false {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("Reader at %#x: %v", off, err)
		}
		skip, err := b.add(e, false)
		if err != nil {
			t.Fatal(err)
		}
		if skip && e.Children {
			r.SkipChildren()
		}
	}
	return ix.nodes.get(off)
}

// TestLocalTypesAgreeWithReader: the types declared inside functions
// (C++ lambdas' closures, C's local structs), which the index passes over
// and File.local indexes from a scan when a type outside refers to one,
// are the nodes the Reader's entries give, each with its children, field
// for field.
func TestLocalTypesAgreeWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		ix, err := f.index()
		if err != nil {
			t.Fatal(err)
		}
		oracle := &index{units: ix.units}
		r := f.Data.Reader()
		depth, inFunc, n := 0, []int{}, 0
		u := -1
		for n < 500 {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			switch {
			case e.Tag == 0:
				depth--
				if len(inFunc) > 0 && inFunc[len(inFunc)-1] == depth {
					inFunc = inFunc[:len(inFunc)-1]
				}
				continue
			case e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit:
				u++
				depth, inFunc = 0, inFunc[:0]
			case e.Tag == dwarf.TagSubprogram && e.Children:
				inFunc = append(inFunc, depth)
			case len(inFunc) > 0 && isTypeTag(e.Tag) && ix.nodes.get(e.Offset) == nil:
				got, err := f.local(ix, e.Offset)
				if err != nil || got == nil {
					t.Fatalf("local %v at %#x: %v, %v", e.Tag, e.Offset, got, err)
				}
				want := readerLocal(t, f, oracle, u, e.Offset)
				if d := localDiff(got, want); d != "" {
					t.Fatalf("local %v at %#x: %s", e.Tag, e.Offset, d)
				}
				n++
			}
			if e.Children {
				depth++
			}
		}
		t.Logf("%d local types agree", n)
		if strings.HasPrefix(t.Name(), "TestLocalTypesAgreeWithReader/cpp-real") && n < 20 {
			t.Errorf("%d local types compared, want at least 20 in a C++ program", n)
		}
	})
}

// localDiff is nodeDiff over a node and its children.
func localDiff(got, want *node) string {
	if d := nodeDiff(got, want); d != "" {
		return d
	}
	for i := range got.kids {
		if d := localDiff(got.kids[i], want.kids[i]); d != "" {
			return fmt.Sprintf("kid %#x: %s", got.kids[i].off, d)
		}
	}
	return ""
}

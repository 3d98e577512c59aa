package dwarf

import (
	"debug/elf"
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

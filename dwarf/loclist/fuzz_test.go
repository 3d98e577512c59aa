package loclist_test

import (
	"encoding/binary"
	"testing"

	"github.com/binscope/binscope/dwarf/loclist"
)

// FuzzLists: corrupt lists of either kind end early, never panic, and
// every entry's expression lies within the section.
func FuzzLists(f *testing.F) {
	// A DWARF 5 list: base address, an offset pair, a view pair, a
	// start/length, the end; and a DWARF 4 one: a pair, the end.
	f.Add([]byte{6, 0x80, 0x10, 0, 0, 0, 0, 0, 0, 4, 0, 0x20, 1, 0x55, 9, 1, 2, 8, 0x90, 0x10, 0, 0, 0, 0, 0, 0, 4, 1, 0x50, 0}, uint64(1))
	f.Add([]byte{0x10, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x55, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, off uint64) {
		in := func(list []loclist.Entry) {
			for _, e := range list {
				if len(e.Expr) > len(b) {
					t.Fatalf("an expression of %d bytes in %d", len(e.Expr), len(b))
				}
			}
		}
		o := int64(off % uint64(len(b)+1))
		in(loclist.Dwarf4(b, o, 0x1000, 8, binary.LittleEndian))
		in(loclist.Dwarf4(b, o, 0x1000, 4, binary.LittleEndian))
		in(loclist.Dwarf5(b, o, 0x1000, 8, binary.LittleEndian, func(i uint64) (uint64, bool) { return i * 16, i < 100 }))
		if _, ok := loclist.Index(b, o, off, binary.LittleEndian); ok && o <= 0 {
			t.Fatalf("Index at base %d found a list", o)
		}
	})
}

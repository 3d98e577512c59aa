package dwarf

import (
	"debug/dwarf"
	"strings"
	"testing"
)

// TestNamesAsDebugDWARF: every tag, attribute and class value spells as
// debug/dwarf's does (its String is the name of its constant, less the
// Tag or Attr prefix), so the package's constants have debug/dwarf's
// names and values, and what the outputs print of them is unchanged.
func TestNamesAsDebugDWARF(t *testing.T) {
	named := map[string]int{}
	for v := 0; v < 1<<16; v++ {
		if g, w := Tag(v).String(), dwarf.Tag(v).String(); g != w {
			t.Fatalf("tag %#x: %q, debug/dwarf %q", v, g, w)
		} else if !strings.HasPrefix(g, "Tag(") {
			named["tag"]++
		}
		if g, w := Attr(v).String(), dwarf.Attr(v).String(); g != w {
			t.Fatalf("attribute %#x: %q, debug/dwarf %q", v, g, w)
		} else if !strings.HasPrefix(g, "Attr(") {
			named["attr"]++
		}
	}
	for v := -2; v < 64; v++ {
		if g, w := Class(v).String(), dwarf.Class(v).String(); g != w {
			t.Fatalf("class %d: %q, debug/dwarf %q", v, g, w)
		} else if !strings.HasPrefix(g, "Class(") {
			named["class"]++
		}
	}
	// debug/dwarf names 69 tags, 121 attributes (DWARF 5's, with the
	// GNU and MIPS ones it knows) and 20 classes.
	if named["tag"] < 60 || named["attr"] < 100 || named["class"] < 20 {
		t.Fatalf("named values: %v", named)
	}
	t.Logf("named values: %v", named)
}

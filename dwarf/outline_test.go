package dwarf

import (
	"slices"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestOutlineMatchesIndex: the outline of a C++ file (no node kept) holds
// what the whole index says a saved index holds: each listed name's
// units, and each class's first definition with its tag and size, on the
// cpp-real fixture and libstdc++'s debug file. The lookups made from it
// are checked against the full conversion by TestSavedLookupCPlusPlus.
func TestOutlineMatchesIndex(t *testing.T) {
	for _, path := range []string{testutil.Fixture(t, "cpp-real").Path, testutil.DebugFile(testutil.RealBinary(t, "libstdc++"))} {
		f, err := Open(path, &Options{Methods: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.typeConverter()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]int32{}
		for _, n := range c.ix.named {
			if !listedTag(n.tag) {
				continue
			}
			var a keyAttrs
			if err := c.keyAttrs(n, &a); err != nil {
				t.Fatal(err)
			}
			q := n.scope + string(a.name)
			if us := want[q]; len(us) == 0 || us[len(us)-1] != n.unit {
				want[q] = append(us, n.unit)
			}
		}
		si, ix, ok, err := f.outline(true)
		if err != nil || !ok {
			t.Fatalf("%s: outline: ok %v, %v", path, ok, err)
		}
		if len(ix.out.names) != len(want) || len(want) < 500 {
			t.Errorf("%s: outline lists %d names, the index %d (want at least 500)", path, len(ix.out.names), len(want))
		}
		for k, us := range ix.out.names {
			if w := want[k.scope+k.name]; !slices.Equal(us, w) {
				t.Errorf("%s: %s%s: outline units %v, index %v", path, k.scope, k.name, us, w)
			}
		}
		if len(si.defs) != len(c.ix.defs) || len(si.defs) < 200 {
			t.Errorf("%s: outline defines %d classes, the index %d (want at least 200)", path, len(si.defs), len(c.ix.defs))
		}
		for k, off := range c.ix.defs {
			tag, size, _ := c.defShape(k)
			if d := si.defs[k]; d.off != off || d.tag != tag || d.size != size {
				t.Errorf("%s: %v: outline %v %v %v, index %v %v %v", path, k, d.off, d.tag, d.size, off, tag, size)
			}
		}
		f.Close()
	}
}

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

// TestOutlineAhead: libstdc++'s debug file compressed by objcopy, opened
// as a cold lookup by name opens it (its sections inflated ahead into a
// new "sections" entry, the outline made in parts as they inflate), has
// the outline that the whole file's pass makes with the cache off: each
// listed name's units, and each class's first definition.
func TestOutlineAhead(t *testing.T) {
	bin := libstdcxxCompressed(t)
	defer func(n uint64) { aheadParts = n }(aheadParts)
	aheadParts = 7
	f, err := Open(bin, &Options{SavedSections: true, outlineAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.ahead == nil {
		t.Fatal("no outline made as the sections inflated")
	}
	si, ix, ok, err := f.outline(true)
	if err != nil || !ok {
		t.Fatalf("outline ahead: ok %v, %v", ok, err)
	}
	wsi, wix := wholeOutline(t, bin)
	if len(ix.units) < 3*int(aheadParts) {
		t.Errorf("%d units outlined ahead (want at least %d)", len(ix.units), 3*aheadParts)
	}
	sameOutline(t, si, ix, wsi, wix)
}

// TestOutlineRest: what is left of .debug_info once it is inflated
// whole, outlined on two cores and joined to the parts before it, is the
// whole file's outline.
func TestOutlineRest(t *testing.T) {
	bin := libstdcxxCompressed(t)
	wsi, wix := wholeOutline(t, bin)
	f, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Debug.LazySection(".debug_info")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := info.All(); err != nil {
		t.Fatal(err)
	}
	start, ok := unitEnd(f.Debug, info, 0) // the rest: after the first unit
	if !ok {
		t.Fatal("no first unit")
	}
	rest, err := f.outlineRest(info, start)
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.outlineSpan(0, start)
	if err != nil {
		t.Fatal(err)
	}
	f.ahead = joinIndex(first, rest)
	si, ix, ok, err := f.outline(true)
	if err != nil || !ok {
		t.Fatalf("outline of the rest: ok %v, %v", ok, err)
	}
	sameOutline(t, si, ix, wsi, wix)
}

// wholeOutline is the outline of bin's whole file, the cache off.
func wholeOutline(t *testing.T, bin string) (*savedIndex, *index) {
	t.Helper()
	whole, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	wsi, wix, ok, err := whole.outline(true)
	if err != nil || !ok {
		t.Fatalf("outline: ok %v, %v", ok, err)
	}
	return wsi, wix
}

// sameOutline checks the outline ix (si its saved index) against the
// whole file's, wix and wsi.
func sameOutline(t *testing.T, si *savedIndex, ix *index, wsi *savedIndex, wix *index) {
	t.Helper()
	if len(ix.units) != len(wix.units) || len(wix.units) < 20 {
		t.Errorf("%d units outlined, %d whole (want at least 20)", len(ix.units), len(wix.units))
	}
	if len(ix.out.names) != len(wix.out.names) || len(wix.out.names) < 500 {
		t.Errorf("%d names outlined ahead, %d whole (want at least 500)", len(ix.out.names), len(wix.out.names))
	}
	for k, us := range wix.out.names {
		if got := ix.out.names[k]; !slices.Equal(got, us) {
			t.Errorf("%s%s: units %v ahead, %v whole", k.scope, k.name, got, us)
		}
	}
	if len(si.defs) != len(wsi.defs) || len(wsi.defs) < 200 {
		t.Errorf("%d classes defined ahead, %d whole (want at least 200)", len(si.defs), len(wsi.defs))
	}
	for k, d := range wsi.defs {
		if si.defs[k] != d {
			t.Errorf("%v: %+v ahead, %+v whole", k, si.defs[k], d)
		}
	}
}

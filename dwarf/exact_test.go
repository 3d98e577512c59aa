package dwarf

import (
	"bytes"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// TestExactLookupCPlusPlus: a C++ class looked up by its qualified name
// (typesExact: the whole index, only that name's definitions converted)
// is what the full conversion (the oracle) gives under that name, on the
// cpp-real fixture and libstdc++'s debug file: the same definitions, each
// with its size, declaring file and line, members and their types.
func TestExactLookupCPlusPlus(t *testing.T) {
	inputs := []struct {
		path    string
		samples int
	}{
		{testutil.Fixture(t, "cpp-real").Path, 40},
		{testutil.DebugFile(testutil.RealBinary(t, "libstdc++")), 12},
	}
	for _, in := range inputs {
		full, names := sampleClasses(t, in.path, nil, in.samples)
		for _, name := range names {
			f, err := Open(in.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			spec, ok, err := f.typesExact([]string{name})
			f.Close()
			if err != nil || !ok {
				t.Fatalf("%s: typesExact: ok %v, %v", name, ok, err)
			}
			if got, want := printFound(t, spec, name), printFound(t, full, name); got != want {
				t.Errorf("%s: exact lookup\n%s\nfull conversion\n%s", name, got, want)
			}
		}
	}
}

// sampleClasses loads path whole and picks n of its qualified classes
// with members, spread over the file.
func sampleClasses(t *testing.T, path string, opts *Options, n int) (*types.Spec, []string) {
	full, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, ty := range full.Types() {
		if st, ok := ty.(*types.Struct); ok && strings.Contains(st.Name, "::") && len(st.Members) > 0 {
			all = append(all, st.Name)
		}
	}
	if len(all) < n {
		t.Fatalf("%s: %d qualified classes, want %d", path, len(all), n)
	}
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, all[i*(len(all)/n)])
	}
	return full, names
}

// printFound prints what spec finds under name, as printSpec does.
func printFound(t *testing.T, spec *types.Spec, name string) string {
	ts, err := spec.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	s := &types.Spec{}
	for _, ty := range ts {
		s.Add(ty)
	}
	return printSpec(s)
}

// TestSavedLookupCPlusPlus: gopahole -C on C++ (Options.Pointees: a class
// behind a pointer read by name, kind and size), cold (the whole index,
// which the index cache then keeps) and warm (from the cache, a few
// units indexed), prints each class exactly as the full conversion (the
// oracle: every type whole) prints it, on the cpp-real fixture and
// libstdc++'s debug file, and the same compressed; at least half of each
// input's lookups warm.
func TestSavedLookupCPlusPlus(t *testing.T) {
	t.Setenv("BINSCOPE_INDEX_CACHE", t.TempDir())
	inputs := []struct {
		path    string
		samples int
	}{
		{testutil.Fixture(t, "cpp-real").Path, 30},
		{testutil.DebugFile(testutil.RealBinary(t, "libstdc++")), 12},
		// Compressed: the cold lookup outlines it as it inflates, and
		// the warm ones read that outline.
		{libstdcxxCompressed(t), 12},
	}
	warmRuns := 0
	for _, in := range inputs {
		warmBefore := warmRuns
		full, names := sampleClasses(t, in.path, &Options{Methods: true}, in.samples)
		for _, name := range names {
			opts := &Options{Methods: true, Pointees: true}
			want := printLayout(t, full, name)
			cold, err := LoadNamed(in.path, []string{name}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := printLayout(t, cold, name); got != want {
				t.Errorf("%s: cold lookup prints\n%s\nthe full conversion\n%s", name, got, want)
			}
			ef, err := elfx.Open(in.path)
			if err != nil {
				t.Fatal(err)
			}
			warm, ok := savedNamed(ef, ef, []string{name}, opts)
			if !ok {
				ef.Close()
				continue // a name the cold lookup found in a C unit first
			}
			warmRuns++
			if got := printLayout(t, warm, name); got != want {
				t.Errorf("%s: warm lookup prints\n%s\nthe full conversion\n%s", name, got, want)
			}
		}
		if warmRuns-warmBefore < in.samples/2 {
			t.Errorf("%s: %d warm lookups of %d, want half", in.path, warmRuns-warmBefore, in.samples)
		}
	}
	if warmRuns < 30 {
		t.Errorf("%d warm lookups, want 30", warmRuns)
	}
}

// libstdcxxCompressed is libstdc++'s debug file with its DWARF
// compressed by objcopy.
func libstdcxxCompressed(t *testing.T) string {
	bin, _ := compressedCopy(t, testutil.DebugFile(testutil.RealBinary(t, "libstdc++")))
	return bin
}

// printLayout is what gopahole -C name prints of spec.
func printLayout(t *testing.T, spec *types.Spec, name string) string {
	var out, warn bytes.Buffer
	err := (&layout.Report{}).Run(&out, &warn, &layout.Selection{Classes: []string{name}}, spec.Path,
		func(func(types.Type)) (*types.Spec, bool, error) { return spec, false, nil })
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String() + warn.String()
}

package dwarf

import (
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
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
		full, err := Load(in.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ty := range full.Types() {
			if st, ok := ty.(*types.Struct); ok && strings.Contains(st.Name, "::") && len(st.Members) > 0 {
				names = append(names, st.Name)
			}
		}
		if len(names) < in.samples {
			t.Fatalf("%s: %d qualified classes, want %d", in.path, len(names), in.samples)
		}
		step := len(names) / in.samples
		for i := 0; i < in.samples; i++ {
			name := names[i*step]
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

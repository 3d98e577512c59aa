package dwarf

import (
	"bytes"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// TestStreamMatchesTypes: a stream of a file's types (a few units
// converted at a time, here dropping what it indexed every few units)
// prints, as gopahole prints a whole listing, what the full conversion
// (the oracle: every type at once, as Types gives them) prints: the same
// types, in the same order, each with the same layout, on the cpp-real
// fixture, libstdc++'s debug file (C++: declarations resolved in other
// units), python3.11d (C) and the rust-real fixture (types of other
// units referred to).
func TestStreamMatchesTypes(t *testing.T) {
	defer func(n int) { streamNodes = n }(streamNodes)
	inputs := []struct {
		path            string
		nodes, minTypes int
		minDrops        int
	}{
		{testutil.Fixture(t, "cpp-real").Path, 500, 300, 1},
		{testutil.DebugFile(testutil.RealBinary(t, "libstdc++")), 30000, 1500, 10},
		{testutil.RealBinary(t, "python3.11d"), 10000, 200, 3},
		// Its units refer to types in others (DW_FORM_ref_addr).
		{testutil.Fixture(t, "rust-real").Path, 5000, 100, 1},
	}
	for _, in := range inputs {
		opts := &Options{Methods: true, Pointees: true}
		full, err := Load(in.path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(full.Types()); n < in.minTypes {
			t.Fatalf("%s: %d types, want at least %d", in.path, n, in.minTypes)
		}
		f, err := Open(in.path, opts)
		if err != nil {
			t.Fatal(err)
		}
		streamNodes = in.nodes
		var got []types.Type
		spec, st, ok, err := f.stream(func(ty types.Type) { got = append(got, ty) })
		f.Close()
		if err != nil || !ok {
			t.Fatalf("%s: stream: ok %v, %v", in.path, ok, err)
		}
		if st.drops < in.minDrops {
			t.Errorf("%s: the stream dropped its units %d times, want at least %d", in.path, st.drops, in.minDrops)
		}
		for _, ty := range got {
			spec.Add(ty)
		}
		want, have := printAll(t, full), printAll(t, spec)
		if want != have {
			i := 0
			for i < len(want) && i < len(have) && want[i] == have[i] {
				i++
			}
			t.Errorf("%s: the stream prints %d bytes, the full conversion %d; they differ from byte %d:\n%.300s\nagainst\n%.300s",
				in.path, len(have), len(want), i, have[max(i-100, 0):], want[max(i-100, 0):])
		}
	}
}

// printAll is what gopahole prints of every type of spec.
func printAll(t *testing.T, spec *types.Spec) string {
	var out, warn bytes.Buffer
	err := (&layout.Report{}).Run(&out, &warn, &layout.Selection{}, spec.Path,
		func(func(types.Type)) (*types.Spec, bool, error) { return spec, false, nil })
	if err != nil {
		t.Fatalf("%s: %v", spec.Path, err)
	}
	return out.String() + warn.String()
}

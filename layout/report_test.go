package layout_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

const kernelBTF = "/sys/kernel/btf/vmlinux"

// serial prints picked one by one, as Report.Run must in parallel.
func serial(t *testing.T, picked []layout.Named, po *layout.PrintOptions) string {
	var want bytes.Buffer
	for _, n := range picked {
		l, err := layout.Analyze(n.Struct, nil)
		if err != nil {
			continue
		}
		l.Name = n.Name
		if err := layout.WriteText(&want, l, po); err != nil {
			t.Fatal(err)
		}
	}
	return want.String()
}

// TestReportStreamOrder: a run without Classes prints while the loader
// converts and on every CPU; its output must be what printing the loaded
// types one by one in load order gives.
func TestReportStreamOrder(t *testing.T) {
	if _, err := os.Stat(kernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	sel := &layout.Selection{Structs: true}
	var out, warn bytes.Buffer
	streamed := false
	err := (&layout.Report{Tool: "test"}).Run(&out, &warn, sel, kernelBTF, func(each func(types.Type)) (*types.Spec, bool, error) {
		spec, err := btf.Load(kernelBTF, &btf.Options{Each: each})
		streamed = err == nil
		return spec, streamed, err
	})
	if err != nil || !streamed {
		t.Fatalf("%v (streamed %v)", err, streamed)
	}
	spec, err := btf.Load(kernelBTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	picked, err := layout.Select(spec, sel)
	if err != nil {
		t.Fatal(err)
	}
	if want := serial(t, picked, nil); len(picked) < 1000 || out.String() != want {
		t.Errorf("streamed output (%d bytes) differs from serial (%d bytes, %d types)", out.Len(), len(want), len(picked))
	}
}

// TestReportSelected: with Classes, the spec's types are picked after
// loading and printed in the order named; a name that is not there is
// the selection's error and nothing is printed.
func TestReportSelected(t *testing.T) {
	b := testutil.Fixture(t, "c-layouts")
	spec := load(t, b.Path)
	var names []string
	for _, ty := range spec.Types() {
		if s, ok := ty.(*types.Struct); ok && s.Name != "" && !s.Incomplete && len(names) < 3 {
			names = append(names, s.Name)
		}
	}
	if len(names) < 3 {
		t.Fatalf("%d structs in %s", len(names), b.Path)
	}
	names[0], names[2] = names[2], names[0]
	src := func(each func(types.Type)) (*types.Spec, bool, error) { return spec, false, nil }
	var out, warn bytes.Buffer
	if err := (&layout.Report{}).Run(&out, &warn, &layout.Selection{Classes: names}, b.Path, src); err != nil {
		t.Fatal(err)
	}
	picked, err := layout.Select(spec, &layout.Selection{Classes: names})
	if err != nil {
		t.Fatal(err)
	}
	// pahole's forced padding, which a DWARF spec turns on
	if want := serial(t, picked, &layout.PrintOptions{ForcePadding: true}); out.String() != want || !strings.HasPrefix(want, "struct "+names[0]+" {") {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	err = (&layout.Report{}).Run(&out, &warn, &layout.Selection{Classes: []string{names[0], "no_such_type"}}, b.Path, src)
	if err == nil || out.Len() != 0 {
		t.Errorf("missing type: %v, printed %q", err, out.String())
	}
}

package btf

import (
	"os"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestEachOnly: with EachOnly the kernel's types go to Each, the same ones
// in the same order as a Spec holds without it, and the Spec holds none.
func TestEachOnly(t *testing.T) {
	if _, err := os.Stat(KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	full, err := Load(KernelBTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []types.Type
	spec, err := Load(KernelBTF, &Options{Each: func(t types.Type) { got = append(got, t) }, EachOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Len() != 0 {
		t.Errorf("spec holds %d types", spec.Len())
	}
	want := full.Types()
	if len(want) < 1000 || len(got) != len(want) {
		t.Fatalf("Each got %d types, the spec without EachOnly %d (want at least 1000)", len(got), len(want))
	}
	for i := range want {
		if got[i].TypeName() != want[i].TypeName() {
			t.Fatalf("type %d: %s, want %s", i, got[i].TypeName(), want[i].TypeName())
		}
	}
}

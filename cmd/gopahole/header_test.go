package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/loader"
)

// TestHeaderKernelStreamed: gopahole --format=c of the kernel's BTF, made
// while the loader converts (streamHeader), is byte for byte the header
// codegen.WriteHeader makes of the loaded spec's picked roots, which
// codegen's TestHeaderKernel compiles with clang -target bpf; with
// --structs too.
func TestHeaderKernelStreamed(t *testing.T) {
	if _, err := os.Stat(btf.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	spec, err := btf.Load(btf.KernelBTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		sel  layout.Selection
	}{
		{nil, layout.Selection{}},
		{[]string{"--structs"}, layout.Selection{Structs: true}},
	} {
		code, out, errs := run(append(append([]string{"--format=c"}, tc.args...), btf.KernelBTF)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		picked, err := layout.Select(spec, &tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		opts := &codegen.HeaderOptions{Source: btf.KernelBTF, BuildID: loader.BuildID(btf.KernelBTF)}
		if _, err := codegen.WriteHeader(&want, layout.Roots(spec, picked), opts); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out, "_Static_assert(__builtin_offsetof"); out != want.String() || n < 20000 {
			t.Errorf("%v: streamed header (%d bytes, %d offset asserts) differs from WriteHeader's (%d bytes)", tc.args, len(out), n, want.Len())
		}
	}
}

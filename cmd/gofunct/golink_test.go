package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestAddrCgoLinkModes: on testdata/cgo-work built by the Go toolchains
// of testutil.GoToolchains (Go 1.16, the oldest the tools read, to the
// newest the module registry serves, and the machine's own), in every
// link mode (with DWARF, and -s -w with .gopclntab only), `gofunct -a`
// at each function's entry names the function and the line the running
// program's own runtime.FuncForPC gives.
func TestAddrCgoLinkModes(t *testing.T) {
	n := 0
	for _, tc := range testutil.GoToolchains {
		for _, mode := range testutil.GoLinkModes {
			bin := testutil.BuildCgoWork(t, tc, mode)
			for _, fn := range testutil.CgoWorkFuncs(t, bin) {
				code, out, errs := runGofunct("-a", fmt.Sprintf("%#x", fn.Addr), bin)
				want := fmt.Sprintf("%s+0x0 (%#x) %s:%d", fn.Name, fn.Addr, fn.File, fn.Line)
				if first, _, _ := strings.Cut(out, "\n"); code != 0 || first != want {
					t.Errorf("%s %s: gofunct -a %#x: exit %d, %q%s; the runtime says %q", tc, mode, fn.Addr, code, first, errs, want)
				}
				n++
			}
		}
	}
	if n < 8*len(testutil.GoToolchains)*len(testutil.GoLinkModes) {
		t.Fatalf("only %d addresses compared", n)
	}
}

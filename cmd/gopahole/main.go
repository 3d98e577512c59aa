// Command gopahole shows struct, union and class layouts of Go, Rust, Zig, C
// and C++ binaries and of kernel BTF, with pahole's flags and habits.
package main

import (
	"os"
	"path/filepath"

	"github.com/binscope/binscope/cmd/internal/oneshot"
)

func main() {
	oneshot.GC() // a run reads a file's types once and exits
	if filepath.Base(os.Args[0]) == pdwtagsName {
		os.Exit(pdwtags(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(gopahole(os.Args[1:], os.Stdout, os.Stderr))
}

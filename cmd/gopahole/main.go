// Command gopahole shows struct, union and class layouts of Go, Rust, Zig, C
// and C++ binaries and of kernel BTF, with pahole's flags and habits.
package main

import (
	"os"

	"github.com/binscope/binscope/cmd/internal/oneshot"
)

func main() {
	oneshot.GC() // a run reads a file's types once and exits
	os.Exit(gopahole(os.Args[1:], os.Stdout, os.Stderr))
}

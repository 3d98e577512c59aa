// Command gopahole shows struct, union and class layouts of Go, Rust, Zig, C
// and C++ binaries and of kernel BTF, with pahole's flags and habits.
package main

import (
	"os"

	"github.com/binscope/binscope/internal/cli"
)

func main() { os.Exit(cli.Gopahole(os.Args[1:], os.Stdout, os.Stderr)) }

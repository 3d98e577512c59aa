// Command gofunct lists the functions of Go, Rust, Zig, C and C++ binaries:
// prototypes, inline expansions with their addresses and call sites, and
// compiler clones.
package main

import (
	"os"

	"github.com/binscope/binscope/cmd/internal/oneshot"
)

func main() {
	oneshot.GC() // a run reads a whole binary's DWARF once and exits
	os.Exit(gofunct(os.Args[1:], os.Stdout, os.Stderr))
}

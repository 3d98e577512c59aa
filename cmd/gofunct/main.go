// Command gofunct lists the functions of Go, Rust, Zig, C and C++ binaries:
// prototypes, inline expansions with their addresses and call sites, and
// compiler clones.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// A run reads a whole binary's DWARF once and exits: collect garbage
	// less often (GOGC=400) unless the user set GOGC.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(gofunct(os.Args[1:], os.Stdout, os.Stderr))
}

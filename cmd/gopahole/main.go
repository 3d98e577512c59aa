// Command gopahole shows struct, union and class layouts of Go, Rust, Zig, C
// and C++ binaries and of kernel BTF, with pahole's flags and habits.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// A run reads a file's types once and exits: collect garbage less
	// often (GOGC=400) unless the user set GOGC.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(gopahole(os.Args[1:], os.Stdout, os.Stderr))
}

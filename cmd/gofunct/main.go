// Command gofunct lists the functions of Go, Rust, Zig, C and C++ binaries:
// prototypes, inline expansions with their addresses and call sites, and
// compiler clones.
package main

import (
	"os"

	"github.com/binscope/binscope/internal/cli"
)

func main() { os.Exit(cli.Gofunct(os.Args[1:], os.Stdout, os.Stderr)) }

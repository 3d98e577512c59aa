// Command goprobe turns probe definitions for Go, Rust, Zig and C programs
// into artifacts other tools run: bpftrace scripts, perf probe commands and
// portable build-id-keyed probe specs.
package main

import (
	"os"

	"github.com/binscope/binscope/internal/cli"
)

func main() { os.Exit(cli.Goprobe(os.Args[1:], os.Stdout, os.Stderr)) }

// Command gopahole shows struct, union and class layouts of Go, Rust, Zig, C
// and C++ binaries and of kernel BTF, with pahole's flags and habits.
package main

import "os"

func main() { os.Exit(gopahole(os.Args[1:], os.Stdout, os.Stderr)) }

// Command goprobe probes Go, Rust, Zig and C programs with uprobes: every
// call of a function, inlined or not, with its arguments (trace, stat,
// hist), CPU profiles with stacks unwound in the kernel (profile), a
// metrics agent (serve), and the same probes as artifacts other tools
// run: bpftrace scripts, perf probe commands, libbpf-style programs and
// portable build-id-keyed specs (gen).
package main

import "os"

func main() { os.Exit(goprobe(os.Args[1:], os.Stdout, os.Stderr)) }

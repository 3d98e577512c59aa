// Build: CGO_ENABLED=1 go build -buildmode=c-shared [-ldflags='-s -w'] -o libstep.so .
// A Go library for C programs (main.c calls Step N times): its code
// addresses count from its own .gopclntab's text start, in a shared
// object loaded wherever the dynamic loader puts it.
package main

import "C"

//go:noinline
func work(i int) int { return i*3 + 1 }

//export Step
func Step(i C.int) C.int { return C.int(work(int(i))) }

func main() {}

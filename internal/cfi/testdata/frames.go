// Fixture of package cfi: call frame information as the Go linker emits it
// (.debug_frame only, compressed).
//
// build go: go build -o $OUT frames.go

package main

import (
	"fmt"
	"os"
)

//go:noinline
func inner(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * 3
	}
	return s
}

//go:noinline
func outer(n int) int {
	v := make([]int, n)
	for i := range v {
		v[i] = inner(i)
	}
	return len(v) + inner(v[n-1]%7)
}

func main() {
	fmt.Println(outer(len(os.Args) + 10))
}

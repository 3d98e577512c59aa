// Build: go build -o count .
// Prints how many times it called twice, which the compiler inlines into
// work's loop and into main.
package main

import (
	"fmt"
	"os"
)

var (
	calls int
	xs    []int // every argument twice was called with
)

func twice(x int) int {
	if x%3 == 0 {
		return x * 2
	}
	return x + x
}

//go:noinline
func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += twice(i)
		calls++
		xs = append(xs, i)
	}
	return s
}

func main() {
	n := 7 + len(os.Args)
	r := work(n) + twice(n)
	calls++
	xs = append(xs, n)
	fmt.Println("twice calls:", calls, r)
	fmt.Println("twice args:", xs)
}

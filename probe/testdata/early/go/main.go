// Build: go build -o early .
// From main's start, calls main.main -> main.mid -> main.leaf N times
// (the first argument, default 2000), then prints "leaf N". The calls take
// well under a millisecond: their stacks must be whole from the start.
package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func leaf(i int) int { return i*2 + 1 }

//go:noinline
func mid(i int) int { return leaf(i) + 1 }

func main() {
	n := 2000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	s := 0
	for i := 0; i < n; i++ {
		s += mid(i)
	}
	fmt.Println("leaf", n, "sum", s)
}

package main

import (
	"fmt"
	"os"
)

type acc struct{ n int }

func (a *acc) add(v int) { a.n += v }

func twice(x int) int { return x * 2 }

//go:noinline
func work(a *acc, k int) int {
	for i := 0; i < k; i++ {
		a.add(twice(i))
	}
	return a.n
}

func main() {
	a := &acc{}
	fmt.Println(work(a, len(os.Args)+3), twice(len(os.Args)))
}

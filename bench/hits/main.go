// Build: go build -o hits .
// Calls an ordinary method (not inlined, with a frame) N times and prints how long the
// calls took, so that probing's cost per hit can be read off.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

type acc struct{ n int }

// add is an ordinary method: it has a frame, so it starts with Go's stack
// check, as most methods do.
//
//go:noinline
func (a *acc) add(v int) {
	a.n += v
	if a.n < 0 {
		a.reset()
	}
}

//go:noinline
func (a *acc) reset() { a.n = 0 }

func main() {
	n := 200000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	a := &acc{}
	start := time.Now()
	for i := 0; i < n; i++ {
		a.add(i)
	}
	el := time.Since(start)
	fmt.Printf("calls %d ns_per_call %.1f total %d\n", n, float64(el.Nanoseconds())/float64(n), a.n)
}

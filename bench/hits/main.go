// Build: go build -o hits .
// Calls an ordinary (not inlined) method N times and prints how long the
// calls took, so that probing's cost per hit can be read off.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

type acc struct{ n int }

//go:noinline
func (a *acc) add(v int) { a.n += v }

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

// Observe's v arrives in X0, which a uprobe cannot read; Go spills it to
// its argument slot before calling note, and its location list says so from
// the call's return on. The program prints each call's v and the count note
// has reached by then.
package main

import (
	"fmt"
	"os"
	"strconv"
)

type hist struct {
	sum   float64
	count int
}

//go:noinline
func (h *hist) Observe(v float64) {
	h.note()
	h.sum += v
}

//go:noinline
func (h *hist) note() { h.count++ }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	h := &hist{}
	for i := 0; i < n; i++ {
		v := float64(i)*1.25 + 0.5
		h.Observe(v)
		fmt.Printf("v=%g n=%d\n", v, h.count)
	}
}

// Build: go build -gcflags=-S -o params .
// Each function stores its arguments into globals so that the compiler's
// own listing (-S) shows which register carries each one.
package main

import "fmt"

var (
	sinkA int64
	sinkB int32
	sinkC uint8
	sinkF float64
	sinkG float32
	sinkN int
	sinkX int64
	sinkY int64
	sinkZ int64
)

type pair struct{ x, y int64 }

type counter struct{ v int64 }

//go:noinline
func mixed(a int64, f float64, b int32, g float32, c uint8) {
	sinkA = a
	sinkF = f
	sinkB = b
	sinkG = g
	sinkC = c
}

//go:noinline
func aggregates(s string, p pair, n int64, q []byte) {
	sinkN = len(s)
	sinkX = p.x
	sinkY = p.y
	sinkA = n
	sinkZ = int64(cap(q))
}

//go:noinline
func (c counter) add(k int64, d float64) {
	sinkX = c.v
	sinkY = k
	sinkF = d
}

//go:noinline
func (c *counter) many(a, b, c2, d, e, f, g, h, i int64) {
	sinkA = i
	sinkX = a
}

func main() {
	mixed(1, 2.5, 3, 4.5, 5)
	aggregates("hello", pair{6, 7}, 8, make([]byte, 3, 9))
	counter{10}.add(11, 12.5)
	c := &counter{}
	c.many(1, 2, 3, 4, 5, 6, 7, 8, 9)
	fmt.Println(sinkA, sinkB, sinkC, sinkF, sinkG, sinkN, sinkX, sinkY, sinkZ)
}

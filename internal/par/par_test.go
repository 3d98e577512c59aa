package par

import (
	"sync/atomic"
	"testing"
)

// TestEach: every index is called exactly once, below and above min.
func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, 5, 255, 256, 10000} {
		calls := make([]atomic.Int32, n)
		Each(n, 256, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

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

// TestStream: every index is made exactly once, and the pieces are handed
// over in order, each once all its indices are made, covering [0, n).
func TestStream(t *testing.T) {
	for _, n := range []int{0, 1, 5, 127, 128, 129, 10000} {
		made := make([]atomic.Int32, n)
		next := 0
		Stream(n, 128, func(i int) { made[i].Add(1) }, func(lo, hi int) {
			if lo != next || hi <= lo || hi > n {
				t.Fatalf("n=%d: piece [%d, %d) after [0, %d)", n, lo, hi, next)
			}
			for i := lo; i < hi; i++ {
				if made[i].Load() != 1 {
					t.Fatalf("n=%d: piece [%d, %d) handed over before index %d was made", n, lo, hi, i)
				}
			}
			next = hi
		})
		if next != n {
			t.Fatalf("n=%d: pieces covered [0, %d)", n, next)
		}
		for i := range made {
			if c := made[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d made %d times", n, i, c)
			}
		}
	}
}

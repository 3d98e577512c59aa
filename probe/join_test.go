package probe

import (
	"math/rand"
	"testing"
)

// TestJoinsAgainstWalks: on random small control-flow graphs with two
// starts, every J that joins accepts is one where each walk from the
// entry (up to a bound) passes the starts and J alternately, a start
// first, and no walk leaves the function between a start and its J: the
// property counting at J instead of the starts needs, checked by walking
// the paths rather than by dominance. Code no edge reaches (a landing
// pad) is a way in too.
func TestJoinsAgainstWalks(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	accepted := 0
	for g := 0; g < 3000; g++ {
		const n = 7
		fl := &flow{succ: map[uint64][]uint64{}, entry: 0}
		for x := uint64(0); x < n-1; x++ { // n-1 is the exit
			k := 1 + rng.Intn(2)
			for i := 0; i < k; i++ {
				y := uint64(1 + rng.Intn(n-1))
				if !contains(fl.succ[x], y) {
					fl.succ[x] = append(fl.succ[x], y)
				}
			}
		}
		fl.pred = map[uint64][]uint64{}
		for x := uint64(0); x < n; x++ {
			fl.addrs = append(fl.addrs, x)
			for _, y := range fl.succ[x] {
				fl.pred[y] = append(fl.pred[y], x)
			}
		}
		a, b := uint64(1+rng.Intn(n-2)), uint64(1+rng.Intn(n-2))
		if a == b {
			continue
		}
		starts := []start{{addr: a}, {addr: b}}
		set := map[uint64]bool{a: true, b: true}
		for j := uint64(1); j < n; j++ {
			if !fl.joins(starts, set, j) {
				continue
			}
			accepted++
			if w, ok := alternates(fl, set, j, 2*n+2); !ok {
				t.Fatalf("graph %v, starts %d %d: joins accepts %d, but the walk %v does not pass starts and it alternately", fl.succ, a, b, j, w)
			}
		}
	}
	t.Logf("%d joins accepted, each checked by its walks", accepted)
	if accepted < 50 {
		t.Fatalf("only %d graphs had a join: the test proves little", accepted)
	}
}

// alternates walks every path from the entry up to limit steps: the
// starts and j must come alternately, a start first, and a path that
// ends (no successor) must not end between a start and j. Walks start at
// the entry and at each instruction no edge reaches (a landing pad).
func alternates(fl *flow, set map[uint64]bool, j uint64, limit int) ([]uint64, bool) {
	var walk, bad []uint64
	var rec func(x uint64, open bool) bool
	rec = func(x uint64, open bool) bool {
		walk = append(walk, x)
		defer func() { walk = walk[:len(walk)-1] }()
		switch {
		case set[x] && open, x == j && !open:
			bad = append([]uint64{}, walk...)
			return false
		case set[x]:
			open = true
		case x == j:
			open = false
		}
		if len(fl.succ[x]) == 0 {
			if open {
				bad = append([]uint64{}, walk...)
			}
			return !open
		}
		if len(walk) >= limit {
			return true
		}
		for _, y := range fl.succ[x] {
			if !rec(y, open) {
				return false
			}
		}
		return true
	}
	for _, x := range fl.addrs {
		if (x == fl.entry || len(fl.pred[x]) == 0) && !rec(x, false) {
			return bad, false
		}
	}
	return nil, true
}

// Package par runs independent pieces of work on every core. A panic in a
// piece of work ends the program, with the worker's own stack, as any Go
// panic does: a decoder of untrusted input run on workers returns its
// errors as values (dwarf's workers defer its guard themselves).
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls f(i) for every i in [0, n): on every core when n is at least
// min, each worker taking the next i (pieces may differ in cost a
// hundredfold), else on this one. It returns when every call has.
func Each(n, min int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < min || workers < 2 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		// Done only after the loop, never deferred: a deferred Done runs
		// while a piece's panic unwinds, and Wait could return and the
		// program go on, or exit 0, before the runtime ends it.
		go func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

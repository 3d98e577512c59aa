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
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// Stream calls f(i) for every i in [0, n) on every core, in pieces of
// size consecutive indices each worker takes in turn, and calls
// done(lo, hi) on the caller's goroutine for each piece in index order, as
// soon as it and the pieces before it are made: the caller consumes the
// first pieces while the next are being made. A worker yields its core
// after each piece, so that done runs then and not only at the end.
func Stream(n, size int, f func(i int), done func(lo, hi int)) {
	pieces := (n + size - 1) / size
	ready := make([]chan struct{}, pieces)
	for k := range ready {
		ready[k] = make(chan struct{})
	}
	var next atomic.Int64
	for range max(1, runtime.GOMAXPROCS(0)) {
		go func() {
			for k := int(next.Add(1)) - 1; k < pieces; k = int(next.Add(1)) - 1 {
				for i := k * size; i < min(n, (k+1)*size); i++ {
					f(i)
				}
				close(ready[k])
				runtime.Gosched()
			}
		}()
	}
	for k := range pieces {
		<-ready[k]
		done(k*size, min(n, (k+1)*size))
	}
}

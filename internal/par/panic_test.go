package par

import (
	"runtime"
	"testing"
)

// TestWorkerPanicReachesCaller: a panic on a worker goroutine of Each and
// Stream is raised again on the caller's goroutine, where a deferred
// recover sees it (a panic left on the worker would end the test binary).
func TestWorkerPanicReachesCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	caught := func(run func()) (p any) {
		defer func() { p = recover() }()
		run()
		return nil
	}
	if p := caught(func() {
		Each(1000, 2, func(i int) {
			if i == 777 {
				panic("each 777")
			}
		})
	}); p != "each 777" {
		t.Errorf("Each: the caller recovered %v", p)
	}
	var done int
	if p := caught(func() {
		Stream(1000, 10, func(i int) {
			if i == 555 {
				panic("stream 555")
			}
		}, func(lo, hi int) { done = hi })
	}); p != "stream 555" {
		t.Errorf("Stream: the caller recovered %v", p)
	}
	// The caller raises the panic at the first piece it waits for once a
	// worker kept it: never past the pieces before the panic's.
	if done > 550 {
		t.Errorf("Stream handed over pieces up to %d, past the panic's piece (550)", done)
	}
}

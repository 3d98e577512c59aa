package command

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestOneShotGC: no collection before the heap reaches oneShotHeap; after
// the first, the collector paces as GOGC=400.
func TestOneShotGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: OneShotGC leaves the collector alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	OneShotGC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var keep [][]byte
	for i := 0; i < 64; i++ { // 64 MB, well under oneShotHeap
		keep = append(keep, make([]byte, 1<<20))
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("%d collections while the heap grew by 64 MB, want none", after.NumGC-before.NumGC)
	}
	if lim := debug.SetMemoryLimit(-1); lim != oneShotHeap {
		t.Fatalf("memory limit %d before the first collection, want %d", lim, oneShotHeap)
	}
	runtime.GC() // the first collection: the sentinel's finalizer hands pacing back
	for i := 0; i < 200 && debug.SetMemoryLimit(-1) != math.MaxInt64; i++ {
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Fatalf("memory limit %d after the first collection, want none", lim)
	}
	p := debug.SetGCPercent(400) // reads it: the finalizer has run
	if p != 400 {
		t.Errorf("GOGC after the first collection: %d, want 400", p)
	}
	runtime.KeepAlive(keep)
}

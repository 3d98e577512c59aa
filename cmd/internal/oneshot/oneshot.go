// Package oneshot tunes the Go runtime for a run that reads one file once
// and exits (gopahole, gofunct): the collector's pacing (GC) and a heap
// backed by transparent huge pages (HugeHeap).
package oneshot

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// GC is for a run that reads a whole file once and exits, unless
// the user set GOGC: the garbage collector first runs when the heap
// reaches oneShotHeap (a small file's run, a C++ program's listing or
// glibc's prototypes, collects nothing), then paces as GOGC=400 (a quarter
// as often as the default) for a large one.
//
// Speed: without it gofunct -P on cpp-real takes 1.5x the CPU
// (bash bench/ab.sh main . 11 gofunct "$(. bench/lib.sh; fixture cpp-real)" -P, GC disabled in one tree).
func GC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	oneShot.on = true
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeap)
	armFirstCollection()
}

// oneShot is GC's state: on until the first collection hands
// pacing to GOGC=400; gen counts the sentinels armed, so that only the
// last one's finalizer acts (HugeHeap's own collection is not the first).
var oneShot struct {
	sync.Mutex
	on, huge bool
	gen      int
	bounded  int   // see Bounded: its percent, or 0
	limit    int64 // see Limit
}

// armFirstCollection makes the next collection hand pacing to GOGC=400:
// it finds this object unreachable and runs its finalizer.
// oneShot is locked.
func armFirstCollection() {
	oneShot.gen++
	gen := oneShot.gen
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		oneShot.Lock()
		defer oneShot.Unlock()
		if gen == oneShot.gen && oneShot.on {
			oneShot.on = false
			debug.SetGCPercent(pace())
			debug.SetMemoryLimit(limit())
		}
	})
}

// pace is the GOGC the collector paces as after the first collection.
// oneShot is locked.
func pace() int {
	if oneShot.bounded > 0 {
		return oneShot.bounded
	}
	return 400
}

// limit is the memory limit after the first collection: Limit's, or
// none. oneShot is locked.
func limit() int64 {
	if oneShot.limit > 0 {
		return oneShot.limit
	}
	return math.MaxInt64
}

// Limit is for a GC run with a goal for its memory (gofunct's listing of
// a large file): after the first collection the collector also runs
// whenever the heap nears bytes (debug.SetMemoryLimit), more often than
// its pace asks as long as what the run holds is well below it.
func Limit(bytes int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	oneShot.limit = bytes
	if !oneShot.on {
		debug.SetMemoryLimit(bytes) // the first collection is past
	}
}

// Bounded is for a GC run whose heap stays bounded as it goes (gopahole's
// stream of a file's types, a few compile units converted at a time):
// after the first collection the collector paces as GOGC=percent (100:
// the heap growing to twice what the run holds, not five times).
func Bounded(percent int) {
	if os.Getenv("GOGC") != "" {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	oneShot.bounded = percent
	if !oneShot.on {
		debug.SetGCPercent(pace()) // the first collection is past
	}
}

// HugeHeap is for a GC run about to decode the file at path: when
// it is large (hugeHeapInput), the heap it fills is backed by huge pages
// where the kernel allows (see hugeHeap). Once per run, before the first
// collection; the collection it runs keeps GC's pacing. It runs
// before the file is opened, not beside it: a collection of the empty heap
// takes a fraction of a millisecond alone, where one running beside the
// file's reading held a core for its marking and stopped the run for up
// to two (cpp-real's listing took 1.9 ms longer, medians of 40 runs).
//
// Speed: without it gofunct -P on cpp-real takes 1.3x the CPU
// (bash bench/ab.sh main . 11 gofunct "$(. bench/lib.sh; fixture cpp-real)" -P, HugeHeap disabled in one tree).
func HugeHeap(path string) {
	if st, err := os.Stat(path); err != nil || st.Size() < hugeHeapInput {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	if !oneShot.on || oneShot.huge {
		return
	}
	oneShot.huge = true
	oneShot.gen++ // the collection below is not the first: its finalizer does nothing
	hugeHeap(hugeHeapBytes)
	armFirstCollection()
}

const (
	// oneShotHeap is the heap a run grows to before its first collection.
	oneShotHeap = 256 << 20
	// hugeHeapInput is the smallest file HugeHeap prepares for: a listing
	// of a 1 MB binary fills a few MB of heap.
	hugeHeapInput = 1 << 20
	// hugeHeapBytes is the heap HugeHeap advises: address space, touched
	// only as the run allocates (cpp-real's prototypes fill 60 MB).
	hugeHeapBytes = 128 << 20
)

// sentinel holds a pointer, so that it is never batched with other small
// objects (whose finalizers may not run).
type sentinel struct{ _ *byte }

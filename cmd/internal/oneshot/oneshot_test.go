package oneshot

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGC: no collection before the heap reaches oneShotHeap; after
// the first, the collector paces as GOGC=400.
func TestGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: GC leaves the collector alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	GC()
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

// TestHugeHeap: HugeHeap on a large file keeps GC's pacing (the
// collection it runs is not the first), does nothing for a small file,
// and where the kernel's policy allows transparent huge pages for an
// advised range, the heap the run fills next is backed by them
// (AnonHugePages of /proc/self/smaps_rollup, the kernel's count). It runs
// in a process of its own, whose heap holds no pages other tests freed.
func TestHugeHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: GC leaves the collector alone")
	}
	if os.Getenv("BINSCOPE_TEST_HUGEHEAP") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeap$", "-test.v")
		cmd.Env = append(os.Environ(), "BINSCOPE_TEST_HUGEHEAP=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestHugeHeap")) {
			t.Fatalf("TestHugeHeap in its own process: %v\n%s", err, out)
		}
		t.Logf("in its own process:\n%s", out)
		return
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	GC()
	small := filepath.Join(t.TempDir(), "small")
	if err := os.WriteFile(small, make([]byte, hugeHeapInput-1), 0o644); err != nil {
		t.Fatal(err)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	gcs := m.NumGC
	HugeHeap(small)
	if runtime.ReadMemStats(&m); m.NumGC != gcs {
		t.Fatalf("HugeHeap of a %d-byte file collected", hugeHeapInput-1)
	}
	exe, err := os.Executable() // this test's binary: several MB
	if err != nil {
		t.Fatal(err)
	}
	before := anonHugeKB(t)
	HugeHeap(exe)
	time.Sleep(100 * time.Millisecond) // the first sentinel's finalizer runs, and must do nothing
	if runtime.ReadMemStats(&m); m.NumGC != gcs+1 {
		t.Errorf("HugeHeap ran %d collections, want 1", m.NumGC-gcs)
	}
	if lim := debug.SetMemoryLimit(-1); lim != oneShotHeap {
		t.Fatalf("memory limit %d after HugeHeap's collection, want %d (the one-shot pacing kept)", lim, oneShotHeap)
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC %d after HugeHeap's collection, want off", p)
	}
	var keep [][]byte
	for i := 0; i < 32<<10; i++ { // 32 MB in small objects, as a walk allocates
		keep = append(keep, make([]byte, 1<<10))
	}
	grown := anonHugeKB(t) - before
	policy, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	switch {
	case bytes.Contains(policy, []byte("[never]")) || len(policy) == 0:
		t.Logf("transparent huge pages off here (%q): %d KB", bytes.TrimSpace(policy), grown)
	case grown < 8<<10:
		t.Errorf("32 MB allocated after HugeHeap: AnonHugePages grew by %d KB, want at least 8 MB (policy %q)", grown, bytes.TrimSpace(policy))
	}
	runtime.KeepAlive(keep)
	runtime.GC() // the first collection after HugeHeap's hands pacing to GOGC=400
	for i := 0; i < 200 && debug.SetMemoryLimit(-1) != math.MaxInt64; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Fatalf("memory limit %d after the first collection, want none", lim)
	}
}

// anonHugeKB is the process's anonymous memory in transparent huge pages.
func anonHugeKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no /proc/self/smaps_rollup: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "AnonHugePages:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("/proc/self/smaps_rollup has no AnonHugePages")
	return 0
}

// TestLimit: a run given a memory goal keeps GC's first collection at
// oneShotHeap, then runs under the limit (the runtime's own setting),
// not without one; once past the first collection, Limit applies at once.
func TestLimit(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: GC leaves the collector alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer func() { oneShot.Lock(); oneShot.limit = 0; oneShot.Unlock() }()
	const goal = 768 << 20
	GC()
	Limit(goal)
	if lim := debug.SetMemoryLimit(-1); lim != oneShotHeap {
		t.Fatalf("memory limit %d before the first collection, want %d", lim, oneShotHeap)
	}
	runtime.GC() // the first collection: the sentinel's finalizer sets the goal
	for i := 0; i < 200 && debug.SetMemoryLimit(-1) != goal; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if lim := debug.SetMemoryLimit(-1); lim != goal {
		t.Fatalf("memory limit %d after the first collection, want %d", lim, goal)
	}
	Limit(goal / 2)
	if lim := debug.SetMemoryLimit(-1); lim != goal/2 {
		t.Fatalf("memory limit %d once set past the first collection, want %d", lim, goal/2)
	}
}

package oneshot

import (
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeHeap makes the next n bytes the heap grows into eligible for
// transparent huge pages (where the kernel's policy is "madvise", the
// default of most distributions): a run that reads a large binary's DWARF
// fills tens of MB of fresh heap, and faulting them in 4 KB pages costs
// nearly as much time, in the kernel, as decoding them (25 ms of system
// time against 30 ms of user time for cpp-real's listing, 8,200 faults,
// before this). It allocates n bytes, which the
// runtime maps fresh and never touches, advises the kernel, collects them
// and returns them to the kernel (debug.FreeOSMemory): later allocations
// reuse the advised range, known to be zero. After a collection alone the
// runtime took the range for used memory and cleared every large object
// and span it placed there, pages the kernel had just zeroed (cpp-real's
// prototypes: the runtime's clearing fell from 12% to 5% of the run's
// CPU profile, 1.3 ms less time; cmd/go's 32 ms less). One collection of
// a heap still empty; where the kernel ignores the advice, nothing
// changes.
func hugeHeap(n int) {
	const huge = 2 << 20
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := (p+huge-1)&^(huge-1)-p, (p+uintptr(n))&^(huge-1)-p
	if lo < hi {
		_ = unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE)
	}
	b = nil
	debug.FreeOSMemory()
}

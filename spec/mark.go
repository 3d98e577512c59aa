package spec

// Mark is the per-thread mark that keeps one call of an inline expansion
// from counting twice where placement found starts one call may pass
// more than once (LLVM interleaves the caller's code with the body, and
// no store of the body marks each call: see probe's anchors).
//
// A start counts only when the thread has no mark for its group in this
// frame, and then sets it; the call's later starts see it and do not
// count. The mark goes at the first instruction after the last start a
// call can pass: where no path leads to a start within the iteration of
// the caller's loops (probe's placement). Two calls made in one frame, in two
// iterations of a loop, have the same stack pointer: the exit between them
// is what tells them apart. The frame is its canonical frame address, so
// that a call deeper on the stack (recursion through the host) has a mark
// of its own.
type Mark struct {
	Group uint32 `json:"group"` // the expansion's starts, unique in a spec
	Start bool   `json:"start,omitempty"`
	Clear bool   `json:"clear,omitempty"`
	// The CFA is register CFAReg plus CFAOff at the site (call frame
	// information); without a row, CFAReg is "" and the mark is the
	// thread's.
	CFAReg string `json:"cfa_reg,omitempty"`
	CFAOff int64  `json:"cfa_off,omitempty"`
}

// MarkMapEntries bounds the marks the threads hold at once (an LRU map: a
// mark a call left, unwinding through a longjmp, goes in time).
const MarkMapEntries = 1 << 14

package code

import (
	"sync"

	"github.com/binscope/binscope/internal/pcln"
)

// goWrappers are a Go binary's wrappers the compiler made, read once:
// the functions' entries (pcln.Table.Wrappers) and the names of those
// inlined.
type goWrappers struct {
	once    sync.Once
	entries map[uint64]bool
	names   map[string]bool
	// inlined are the wrappers a model read from the table found inlined
	// (pclnInlines).
	inlined []string
}

// panics are the functions a wrapper may call and still be shown: the
// runtime's elideWrapperCalling keeps a wrapper that called one (funcID
// gopanic, sigpanic, panicwrap, which the linker gives by these names).
var panics = map[string]bool{"runtime.gopanic": true, "runtime.sigpanic": true, "runtime.panicwrap": true}

// Traceback is the inline chain at addr (At's, innermost first) as Go's
// runtime gives it in its tracebacks and in runtime.Callers, so in every
// profile it writes: without the frames of the wrappers the compiler made
// (a value method's pointer wrapper, (*T).M for T.M, which Go 1.19 builds
// with T.M inlined into it), unless the frame a wrapper calls is a panic
// (runtime/traceback.go: funcID_wrapper, elideWrapperCalling). callee is
// the function the outermost frame at addr called: the one holding the
// next inner address of the stack, "" at the innermost. For code that is
// not Go, At's chain. A file the model no longer has open (Close) gives
// no wrappers unless Options.Traceback read them at Open.
func (m *Model) Traceback(addr uint64, callee string) []Frame {
	frames := m.At(addr)
	w := m.wrappers()
	if len(w.entries) == 0 && len(w.names) == 0 {
		return frames
	}
	out := make([]Frame, 0, len(frames))
	for _, f := range frames {
		wrapper := w.names[f.Name]
		if !f.Inline {
			wrapper = f.Func != nil && w.entries[f.Func.LowPC]
		}
		if !wrapper || panics[callee] {
			out = append(out, f)
		}
		callee = f.Name
	}
	return out
}

// wrappers are the model's Go wrappers: from the table the model was
// read from, or for a model read from DWARF the file's own table.
func (m *Model) wrappers() *goWrappers {
	w := &m.wraps
	w.once.Do(func() {
		t := m.pcln
		if t == nil && m.ELF != nil && pcln.Has(m.ELF) {
			t, _ = pcln.Open(m.ELF)
		}
		if t == nil {
			return
		}
		w.entries = t.Wrappers()
		w.names = map[string]bool{}
		for _, n := range w.inlined {
			w.names[n] = true
		}
		if m.DWARF != nil {
			inl, _ := t.InlinedWrappers(m.ELF)
			for n := range inl {
				w.names[n] = true
			}
		}
	})
	return w
}

package pcln

import "bytes"

// Go's runtime leaves the frames of the wrappers the compiler made out of
// its tracebacks and of runtime.Callers (so of every profile): a value
// method's pointer wrapper ((*T).M for T.M), a promoted method's, and
// other code the compiler generates. The linker marks them with the last
// of the runtime's function IDs (_func.funcID and inlinedCall.funcID:
// funcID_wrapper, abi.FuncIDWrapper), whose number changed from version to
// version (22 in Go 1.16 and 1.17, 21 in 1.18 to 1.21, 22 in 1.22 to
// 1.24, 23 from 1.25). The table gives it through the runtime's own
// functions that carry the IDs before it: in Go 1.16 the ID before it is
// runtime.asyncPreempt's; from Go 1.17 the IDs are in the order of their
// names, which ends with systemstack, systemstack_switch (the linker of
// Go 1.18 gives runtime.systemstack_switch no ID) and wrapper.

// wrapperID is the function ID the table's wrappers carry; false when
// the table has neither runtime.asyncPreempt nor runtime.systemstack with
// an ID (and then -1).
func (t *Table) wrapperID(ff inlFormat, tab view) (int, bool) {
	funcnames := tab.from(tab.u64(uint64(ff.funcnames)))
	after := map[string]int{"runtime.asyncPreempt": 1, "runtime.systemstack": 2}
	id := -1
	t.eachFunc(ff, tab, func(_, _, _ uint64, f view) {
		off := uint64(f.u32(uint64(ff.fnName)))
		if off >= uint64(len(funcnames)) {
			return
		}
		name := funcnames[off:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if k, ok := after[string(name)]; ok { // no string made
			if fid := int(f.u8(uint64(ff.nfuncdata - 3))); fid > 0 {
				id = max(id, fid+k)
			}
		}
	})
	return id, id > 0
}

// Wrappers are the entries of the table's functions that are wrappers the
// compiler or linker made, which Go's runtime leaves out of its tracebacks
// unless they call a panic (runtime.gopanic, runtime.sigpanic,
// runtime.panicwrap): by address, as an ABI wrapper has the name of the
// function it calls (syscall.Syscall, runtime.newproc). An inlined
// wrapper is marked in its inline tree (InlinedCall.Wrapper). None for a
// table of another word size or one whose wrapper ID is unknown.
func (t *Table) Wrappers() map[uint64]bool {
	ff, ok := t.format()
	if !ok {
		return nil
	}
	v := view{b: t.Data, bad: new(bool)}
	id, ok := t.wrapperID(ff, v)
	if !ok {
		return nil
	}
	out := map[uint64]bool{}
	t.eachFunc(ff, v, func(entry, _, _ uint64, f view) {
		if int(f.u8(uint64(ff.nfuncdata-3))) == id {
			out[entry] = true
		}
	})
	if *v.bad {
		return nil
	}
	return out
}

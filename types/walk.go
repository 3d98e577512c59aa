package types

// A Walk guards one recursive walk over a type graph, as cilium's btf
// traversal guards its own with a visited set: it holds the types on the
// path from the walk's root to where it is, refuses a type already on that
// path (the walk would go round a cycle for ever) and a path longer than
// MaxDepth (no real type nests so deep). Every walk over the model that
// follows Targets, Elems, Members or Params goes through a Walk.
//
// A recursive walk enters each type it descends into and leaves it on the
// way back:
//
//	func size(t Type, w *Walk) int64 {
//		if !w.Enter(t) {
//			return 0 // a cycle, or too deep
//		}
//		n := sizeEntered(t, w) // ...size(v.Elem, w)...
//		w.Leave()
//		return n
//	}
//
// (a deferred Leave costs more in the hot walks, whose many returns keep
// the compiler from inlining the defer).
//
// A loop along a chain (typedef to qualifier to pointer) enters each link
// and never leaves: `for w := (Walk{}); w.Enter(t); t = next { ... }` stops
// at a link met before. The zero Walk is ready to use; a Walk is not safe
// for concurrent use.
type Walk struct {
	n    int     // the path's length
	buf  [8]Type // the path's first types, without an allocation
	more []Type  // the rest of the path
}

// Enter reports whether the walk may go into t, and if so puts t on the
// path. It returns false when the path is MaxDepth long or already holds
// t. A nil t is never on the path: the walk may always enter it.
func (w *Walk) Enter(t Type) bool {
	if w.n >= MaxDepth {
		return false
	}
	if t != nil {
		for _, p := range w.buf[:min(w.n, len(w.buf))] {
			if p == t {
				return false
			}
		}
		for _, p := range w.more {
			if p == t {
				return false
			}
		}
	}
	if w.n < len(w.buf) {
		w.buf[w.n] = t
	} else {
		w.more = append(w.more, t)
	}
	w.n++
	return true
}

// Leave takes the last type entered off the path.
func (w *Walk) Leave() {
	switch {
	case w.n == 0:
		return
	case w.n <= len(w.buf):
		w.buf[w.n-1] = nil
	default:
		w.more[len(w.more)-1] = nil
		w.more = w.more[:len(w.more)-1]
	}
	w.n--
}

// Depth is the length of the path: 0 at the root before it is entered.
func (w *Walk) Depth() int { return w.n }

// Unqualified strips qualifiers (const, volatile, restrict, _Atomic, type
// tags), not typedefs. A qualifier of nothing is returned as it is.
func Unqualified(t Type) Type {
	if _, ok := t.(*Qualifier); !ok {
		return t
	}
	for w := (Walk{}); w.Enter(t); {
		q, ok := t.(*Qualifier)
		if !ok || q.Target == nil {
			return t
		}
		t = q.Target
	}
	return t
}

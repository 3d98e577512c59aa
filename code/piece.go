package code

// Piece is the contiguous range of code [lo, hi) holding addr whose first
// byte starts an instruction: a range of a function's out-of-line copy, of
// a clone or piece of it (foo.cold), or of a symbol's code; the innermost
// when ranges nest. ok is false when no function of the model covers addr.
func (m *Model) Piece(addr uint64) (lo, hi uint64, ok bool) {
	h, ok := m.hostAt(addr)
	return h.lo, h.hi, ok
}

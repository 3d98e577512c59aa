package loclist_test

import (
	"testing"

	"github.com/binscope/binscope/dwarf/loclist"
)

// TestSpan: the entry holding pc, joined with the entries end to end that
// give the same expression, not across a gap, another expression or the
// default.
func TestSpan(t *testing.T) {
	slot, reg := []byte{0x91, 0x40}, []byte{0x59}
	list := []loclist.Entry{
		{Lo: 0x10, Hi: 0x20, Expr: reg},
		{Lo: 0x20, Hi: 0x30, Expr: slot},
		{Lo: 0x30, Hi: 0x38, Expr: slot},
		{Lo: 0x40, Hi: 0x50, Expr: slot},
		{Lo: 0, Hi: ^uint64(0), Expr: slot},
	}
	for _, c := range []struct{ pc, lo, hi uint64 }{
		{0x18, 0x10, 0x20},
		{0x20, 0x20, 0x38},
		{0x37, 0x20, 0x38},
		{0x44, 0x40, 0x50},
		{0x3c, 0, 0}, // the default's
		{0x08, 0, 0},
	} {
		if lo, hi := loclist.Span(list, c.pc); lo != c.lo || hi != c.hi {
			t.Errorf("Span(%#x) = %#x, %#x; want %#x, %#x", c.pc, lo, hi, c.lo, c.hi)
		}
	}
}

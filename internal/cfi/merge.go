package cfi

import (
	"cmp"
	"slices"
)

// fde is one FDE: its range [lo, hi), its instructions [prog, end) of its
// section, and sec, the section's rank (.eh_frame is 0 and wins).
type fde struct {
	lo, hi    uint64
	prog, end int
	c         *cie
	s         *section
	sec       int
}

// piece is the part [lo, hi) of an FDE that ends up in the table.
type piece struct {
	lo, hi uint64
	f      *fde
}

// builder collects the FDEs of the sections read, then builds the table.
type builder struct {
	fdes      []fde
	progBytes int // the FDEs' instructions, to size the table
}

// table places the FDEs: within a section, the part of an FDE that
// overlaps a lower one is dropped; .debug_frame keeps only what .eh_frame
// does not cover. Then it runs the program of each piece, in address order,
// into the rows, adding a Covered=false row after each piece not followed
// by another and merging identical neighbours.
func (b *builder) table() ([]Row, error) {
	if len(b.fdes) == 0 {
		return nil, nil
	}
	pieces := b.pieces()
	// A row takes at least one byte of instructions (an advance); GCC's,
	// LLVM's and Go's take 3 to 4.5 bytes a row, padding included.
	rows := make([]Row, 0, b.progBytes/4+2*len(pieces))
	var m interp
	for i, p := range pieces {
		if err := m.fdeProgram(p.f, p.lo, p.hi, &rows); err != nil {
			return nil, err
		}
		if i+1 == len(pieces) || pieces[i+1].lo != p.hi {
			rows = append(rows, Row{PC: p.hi})
		}
	}
	return rows, nil
}

// pieces places the FDEs (see table): the pieces in address order.
func (b *builder) pieces() []piece {
	slices.SortStableFunc(b.fdes, func(x, y fde) int {
		if c := cmp.Compare(x.sec, y.sec); c != 0 {
			return c
		}
		return cmp.Compare(x.lo, y.lo)
	})
	split := len(b.fdes)
	for i, f := range b.fdes {
		if f.sec != 0 {
			split = i
			break
		}
	}
	eh := disjoint(b.fdes[:split])
	return merge(eh, subtract(disjoint(b.fdes[split:]), eh))
}

// disjoint turns FDEs sorted by address into pieces that do not overlap:
// an FDE starting inside an earlier one keeps only what lies past it.
func disjoint(fdes []fde) []piece {
	out := make([]piece, 0, len(fdes))
	var end uint64
	for i := range fdes {
		f := &fdes[i]
		lo := f.lo
		if len(out) > 0 && lo < end {
			lo = end
		}
		if lo >= f.hi {
			continue
		}
		out = append(out, piece{lo: lo, hi: f.hi, f: f})
		end = f.hi
	}
	return out
}

// subtract returns the parts of pieces (sorted, disjoint) that no piece of
// cover (sorted, disjoint) overlaps.
func subtract(pieces, cover []piece) []piece {
	var out []piece
	j := 0
	for _, p := range pieces {
		for j < len(cover) && cover[j].hi <= p.lo {
			j++
		}
		lo := p.lo
		for k := j; k < len(cover) && cover[k].lo < p.hi; k++ {
			if cover[k].lo > lo {
				out = append(out, piece{lo: lo, hi: cover[k].lo, f: p.f})
			}
			lo = max(lo, cover[k].hi)
		}
		if lo < p.hi {
			out = append(out, piece{lo: lo, hi: p.hi, f: p.f})
		}
	}
	return out
}

// merge merges two sorted lists of pieces that do not overlap.
func merge(a, b []piece) []piece {
	if len(b) == 0 {
		return a
	}
	out := make([]piece, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].lo < b[0].lo {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// Fill returns rows (a table as Table gives it) with the addresses none
// of its rows covers described by more (another such table): one table,
// sorted, identical neighbours merged.
func Fill(rows, more []Row) []Row {
	if len(more) == 0 {
		return rows
	}
	out := make([]Row, 0, len(rows)+len(more))
	var a, b Row // the rows in force; before the first, Covered false
	for i, j := 0, 0; i < len(rows) || j < len(more); {
		pc := uint64(0)
		switch {
		case j == len(more) || i < len(rows) && rows[i].PC <= more[j].PC:
			pc = rows[i].PC
		default:
			pc = more[j].PC
		}
		for ; i < len(rows) && rows[i].PC == pc; i++ {
			a = rows[i]
		}
		for ; j < len(more) && more[j].PC == pc; j++ {
			b = more[j]
		}
		r := a
		if !a.Covered {
			r = b
		}
		r.PC = pc
		if n := len(out); n == 0 && !r.Covered || n > 0 && out[n-1].sameRules(r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Package loclist reads DWARF location lists: the DWARF 2 to 4 lists of
// .debug_loc, the DWARF 5 lists of .debug_loclists (DWARF 5 §2.6.2),
// which say where a variable lives over each range of addresses, and
// the DW_LLE_GNU_* lists of GCC's DWARF 4 split DWARF (GNU). Its
// Reader reads the values of any such list, range lists (.debug_ranges,
// .debug_rnglists) too, which share their encoding.
//
// The package holds no state: a caller passes the section's bytes and
// what the unit gives (its base address, its address size, a lookup into
// .debug_addr). Corrupt input ends a list early (GNU says why it cannot
// read one); no function panics.
package loclist

import (
	"bytes"
	"encoding/binary"

	"github.com/binscope/binscope/internal/leb128"
)

// Entry is one entry of a location list: Expr, a DWARF expression, says
// where the value lives for addresses in [Lo, Hi). A default location
// (DW_LLE_default_location) covers [0, 2^64-1).
type Entry struct {
	Lo, Hi uint64
	Expr   []byte
}

// MaxEntries bounds a list read from corrupt input.
const MaxEntries = 1 << 16

// Dwarf4 reads the .debug_loc list at off in b (DWARF 2 to 4), whose
// offsets count from base (the unit's DW_AT_low_pc) until a base address
// entry changes it. It returns the entries read before the end of the
// list or of the bytes; nil for an offset outside b.
func Dwarf4(b []byte, off int64, base uint64, addrSize int, order binary.ByteOrder) []Entry {
	if off < 0 || off >= int64(len(b)) {
		return nil
	}
	b = b[off:]
	sz := addrSize
	word := func() uint64 {
		if sz == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	maxAddr := uint64(1)<<(8*sz) - 1
	if sz == 8 {
		maxAddr = ^uint64(0)
	}
	var out []Entry
	for len(out) < MaxEntries && len(b) >= 2*sz {
		lo := word()
		b = b[sz:]
		hi := word()
		b = b[sz:]
		switch {
		case lo == 0 && hi == 0:
			return out
		case lo == maxAddr:
			base = hi
			continue
		}
		if len(b) < 2 {
			return out
		}
		n := int(order.Uint16(b))
		b = b[2:]
		if n > len(b) {
			return out
		}
		out = append(out, Entry{Lo: base + lo, Hi: base + hi, Expr: b[:n]})
		b = b[n:]
	}
	return out
}

// DW_LLE_* codes of DWARF 5 location lists.
const (
	lleEndOfList = iota
	lleBaseAddressx
	lleStartxEndx
	lleStartxLength
	lleOffsetPair
	lleDefaultLocation
	lleBaseAddress
	lleStartEnd
	lleStartLength
	// lleGNUViewPair (DW_LLE_GNU_view_pair, GCC's
	// -gvariable-location-views=incompat5) gives the views of the entry
	// after it: two ULEB128 numbers.
	lleGNUViewPair = 0x09
)

// Index is the offset in .debug_loclists (b) of list i of a unit whose
// offsets array starts at base (DW_AT_loclists_base): the target of a
// DW_FORM_loclistx (32-bit DWARF). false for an index outside b.
func Index(b []byte, base int64, i uint64, order binary.ByteOrder) (int64, bool) {
	o := base + int64(i)*4
	if base <= 0 || o < 0 || o+4 > int64(len(b)) {
		return 0, false
	}
	return base + int64(order.Uint32(b[o:])), true
}

// Dwarf5 reads the .debug_loclists list at off in b (DWARF 5). addrx
// reads entry i of the unit's .debug_addr table. It returns the entries
// read before the end of the list, of the bytes or the first entry it
// cannot read; nil for an offset outside b.
func Dwarf5(b []byte, off int64, base uint64, addrSize int, order binary.ByteOrder, addrx func(i uint64) (uint64, bool)) []Entry {
	if off < 0 || off >= int64(len(b)) {
		return nil
	}
	r := Reader{B: b[off:], Order: order, AddrSize: addrSize, OK: true}
	index := func() uint64 {
		v, found := addrx(r.Uleb())
		r.OK = r.OK && found
		return v
	}
	var out []Entry
	for r.OK && len(r.B) > 0 && len(out) < MaxEntries {
		var lo, hi uint64
		switch r.Byte() {
		case lleEndOfList:
			return out
		case lleBaseAddressx:
			base = index()
			continue
		case lleBaseAddress:
			base = r.Addr()
			continue
		case lleGNUViewPair:
			r.Uleb()
			r.Uleb()
			continue
		case lleStartxEndx:
			lo = index()
			hi = index()
		case lleStartxLength:
			lo = index()
			hi = lo + r.Uleb()
		case lleOffsetPair:
			lo = base + r.Uleb()
			hi = base + r.Uleb()
		case lleDefaultLocation:
			lo, hi = 0, ^uint64(0)
		case lleStartEnd:
			lo = r.Addr()
			hi = r.Addr()
		case lleStartLength:
			lo = r.Addr()
			hi = lo + r.Uleb()
		default:
			return out
		}
		n := r.Uleb()
		if !r.OK || n > uint64(len(r.B)) {
			return out
		}
		out = append(out, Entry{Lo: lo, Hi: hi, Expr: r.B[:n]})
		r.B = r.B[n:]
	}
	return out
}

// At is the expression of list that holds at pc: the entry covering pc,
// else the default location. found is false when the value is not
// available at pc.
func At(list []Entry, pc uint64) (expr []byte, found bool) {
	var def []byte
	haveDef := false
	for _, le := range list {
		if le.Lo == 0 && le.Hi == ^uint64(0) {
			def, haveDef = le.Expr, true
			continue
		}
		if pc >= le.Lo && pc < le.Hi {
			return le.Expr, true
		}
	}
	return def, haveDef
}

// Span is the stretch of addresses around pc where list gives, without a
// break, the expression that holds at pc: the entry covering pc, widened
// by the entries that join it end to end with the same expression. lo and
// hi are 0 when no entry covers pc (the default location, or none).
func Span(list []Entry, pc uint64) (lo, hi uint64) {
	k := -1
	for i, le := range list {
		if !(le.Lo == 0 && le.Hi == ^uint64(0)) && pc >= le.Lo && pc < le.Hi {
			k = i
			break
		}
	}
	if k < 0 {
		return 0, 0
	}
	lo, hi = list[k].Lo, list[k].Hi
	for widened := true; widened; {
		widened = false
		for _, le := range list {
			if !bytes.Equal(le.Expr, list[k].Expr) || le.Lo == 0 && le.Hi == ^uint64(0) {
				continue
			}
			if le.Hi == lo && le.Lo < lo {
				lo, widened = le.Lo, true
			}
			if le.Lo == hi && le.Hi > hi {
				hi, widened = le.Hi, true
			}
		}
	}
	return lo, hi
}

// Reader reads the values of a range or location list from B; OK turns
// false at the first value past its end, and each read after returns 0.
type Reader struct {
	B        []byte
	Order    binary.ByteOrder
	AddrSize int // 4 or 8
	OK       bool
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.B) < 1 {
		r.OK = false
		return 0
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

// Uleb reads an unsigned LEB128 number; bits past the 64th are dropped.
func (r *Reader) Uleb() uint64 {
	v, n := leb128.Uint(r.B)
	if n == 0 {
		r.OK = false
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Addr reads an address of AddrSize bytes.
func (r *Reader) Addr() uint64 {
	if len(r.B) < r.AddrSize || (r.AddrSize != 4 && r.AddrSize != 8) {
		r.OK = false
		return 0
	}
	var v uint64
	if r.AddrSize == 4 {
		v = uint64(r.Order.Uint32(r.B))
	} else {
		v = r.Order.Uint64(r.B)
	}
	r.B = r.B[r.AddrSize:]
	return v
}

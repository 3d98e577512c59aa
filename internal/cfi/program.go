package cfi

import (
	"bytes"
	"encoding/binary"
)

// Pointer encodings (DW_EH_PE_*).
const (
	encAbsptr  = 0x00
	encULEB    = 0x01
	encUData2  = 0x02
	encUData4  = 0x03
	encUData8  = 0x04
	encSLEB    = 0x09
	encSData2  = 0x0a
	encSData4  = 0x0b
	encSData8  = 0x0c
	encPCRel   = 0x10
	encDataRel = 0x30
	encIndir   = 0x80
	encOmit    = 0xff
)

// pointer reads a pointer in encoding enc. Indirect pointers (to a
// personality routine) are read as the address of the slot; the unwinder
// never follows them.
func (p *parser) pointer(r *reader, enc byte, size int) (uint64, bool) {
	if enc == encOmit {
		return 0, true
	}
	at := p.addr + r.off
	var v uint64
	var ok bool
	switch enc & 0x0f {
	case encAbsptr:
		v, ok = r.uint(size)
	case encULEB:
		v, ok = r.uleb()
	case encUData2, encUData4, encUData8:
		v, ok = r.uint(2 << (enc&0x0f - encUData2))
	case encSLEB:
		var x int64
		x, ok = r.sleb()
		v = uint64(x)
	case encSData2, encSData4, encSData8:
		n := 2 << (enc&0x0f - encSData2)
		v, ok = r.uint(n)
		if shift := 64 - 8*n; ok && shift > 0 {
			v = uint64(int64(v<<shift) >> shift)
		}
	default:
		return 0, false
	}
	if !ok {
		return 0, false
	}
	switch enc & 0x70 {
	case 0:
	case encPCRel:
		v += at
	case encDataRel:
		// Relative to the GOT or .eh_frame_hdr (i386, some ARM): not an
		// address this reader resolves; kept as is.
	default:
		// textrel, funcrel, aligned: unused on x86-64 and AArch64.
	}
	return v, true
}

// state is the register rules at one location.
type state struct {
	cfa    CFA
	ra, fp Rule
}

// run executes an FDE's program after its CIE's initial one and returns
// the rows for [lo, hi).
func (p *parser) run(off uint64, c *cie, prog []byte, lo, hi uint64, enc byte) ([]Row, error) {
	var initial state
	initial.ra = Rule{Kind: SameValue}
	cur := initial
	var stack []state
	loc := lo
	var rows []Row
	emit := func() {
		rows = append(rows, Row{PC: loc, CFA: cur.cfa, RA: cur.ra, FP: cur.fp, Covered: true})
	}
	// The CIE's program sets the initial rules; restore returns to them.
	exec := func(b []byte, inCIE bool) error {
		r := &reader{b: b, end: uint64(len(b)), order: p.order}
		setRule := func(reg uint64, rule Rule) {
			switch uint16(reg) {
			case c.ra:
				cur.ra = rule
			case p.fp:
				cur.fp = rule
			}
		}
		restore := func(reg uint64) {
			switch uint16(reg) {
			case c.ra:
				cur.ra = initial.ra
			case p.fp:
				cur.fp = initial.fp
			}
		}
		advance := func(delta uint64) {
			next := loc + delta*c.codeAlign
			if next > loc && !inCIE {
				emit()
			}
			loc = next
		}
		for steps := 0; r.off < r.end; steps++ {
			if steps > len(b) {
				return p.errorf(off, "call frame program does not advance")
			}
			op, _ := r.u8()
			bad := func() error { return p.errorf(off, "truncated call frame instruction %#x", op) }
			switch op & 0xc0 {
			case 0x40: // advance_loc
				advance(uint64(op & 0x3f))
				continue
			case 0x80: // offset
				v, ok := r.uleb()
				if !ok {
					return bad()
				}
				setRule(uint64(op&0x3f), Rule{Kind: Offset, Offset: int64(v) * c.dataAlign})
				continue
			case 0xc0: // restore
				restore(uint64(op & 0x3f))
				continue
			}
			switch op {
			case 0x00: // nop
			case 0x01: // set_loc
				v, ok := p.pointer(r, enc, c.ptrSize)
				if !ok {
					return bad()
				}
				if v > loc && !inCIE {
					emit()
				}
				loc = v
			case 0x02, 0x03, 0x04, 0x1d: // advance_loc1/2/4, MIPS advance_loc8
				d, ok := r.uint([...]int{0x02: 1, 0x03: 2, 0x04: 4, 0x1d: 8}[op])
				if !ok {
					return bad()
				}
				advance(d)
			case 0x05, 0x11, 0x14, 0x15, 0x2f: // offset_extended(_sf), val_offset(_sf), GNU_negative_offset_extended
				reg, ok1 := r.uleb()
				o, ok2 := r.operand(op == 0x11 || op == 0x15, c.dataAlign)
				if !ok1 || !ok2 {
					return bad()
				}
				if op == 0x2f {
					o = -o
				}
				kind := Offset
				if op == 0x14 || op == 0x15 {
					kind = ValOffset
				}
				setRule(reg, Rule{Kind: kind, Offset: o})
			case 0x06: // restore_extended
				reg, ok := r.uleb()
				if !ok {
					return bad()
				}
				restore(reg)
			case 0x07, 0x08: // undefined, same_value
				reg, ok := r.uleb()
				if !ok {
					return bad()
				}
				kind := Undefined
				if op == 0x08 {
					kind = SameValue
				}
				setRule(reg, Rule{Kind: kind})
			case 0x09: // register
				reg, ok1 := r.uleb()
				reg2, ok2 := r.uleb()
				if !ok1 || !ok2 {
					return bad()
				}
				setRule(reg, Rule{Kind: Register, Reg: uint16(reg2)})
			case 0x0a: // remember_state
				if len(stack) > 64 {
					return p.errorf(off, "remember_state nested too deep")
				}
				stack = append(stack, cur)
			case 0x0b: // restore_state
				if len(stack) == 0 {
					return p.errorf(off, "restore_state without remember_state")
				}
				// Every rule comes back, the CFA's too.
				cur, stack = stack[len(stack)-1], stack[:len(stack)-1]
			case 0x0c, 0x12: // def_cfa, def_cfa_sf
				reg, ok1 := r.uleb()
				o, ok2 := r.operand(op == 0x12, factor(op == 0x12, c))
				if !ok1 || !ok2 {
					return bad()
				}
				cur.cfa = CFA{Reg: uint16(reg), Offset: o}
			case 0x0d: // def_cfa_register
				reg, ok := r.uleb()
				if !ok {
					return bad()
				}
				cur.cfa.Reg, cur.cfa.Expr, cur.cfa.PLT = uint16(reg), false, false
			case 0x0e, 0x13: // def_cfa_offset, def_cfa_offset_sf
				o, ok := r.operand(op == 0x13, factor(op == 0x13, c))
				if !ok {
					return bad()
				}
				cur.cfa.Offset = o
			case 0x0f: // def_cfa_expression
				expr, ok := r.block()
				if !ok {
					return bad()
				}
				cur.cfa = CFA{Expr: true}
				if isPLT(expr) {
					cur.cfa = CFA{Reg: 7, Offset: 8, Expr: true, PLT: true}
				}
			case 0x10, 0x16: // expression, val_expression
				reg, ok := r.uleb()
				if !ok {
					return bad()
				}
				if _, ok := r.block(); !ok {
					return bad()
				}
				setRule(reg, Rule{Kind: Expression})
			case 0x2d: // GNU_window_save; on AArch64 negate_ra_state (pointer authentication)
			case 0x2e: // GNU_args_size
				if _, ok := r.uleb(); !ok {
					return bad()
				}
			default:
				return p.errorf(off, "unknown call frame instruction %#x", op)
			}
		}
		return nil
	}
	if err := exec(c.init, true); err != nil {
		return nil, err
	}
	initial = cur
	loc = lo
	if err := exec(prog, false); err != nil {
		return nil, err
	}
	if loc < hi {
		emit()
	}
	// Rows past the FDE's end (a set_loc beyond it) are dropped.
	kept := rows[:0]
	for _, r := range rows {
		if r.PC >= lo && r.PC < hi {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// factor is the data alignment factor for the _sf forms of the CFA
// instructions, 1 for the others (their offsets are not factored).
func factor(sf bool, c *cie) int64 {
	if sf {
		return c.dataAlign
	}
	return 1
}

// pltCFA is the CFA expression GCC and ld give x86-64 PLT entries:
// rsp + 8 + ((rip & 15) >= 11 ? 8 : 0), with 10 for some linkers.
var pltCFA = [][]byte{
	{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22},
	{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22},
}

func isPLT(expr []byte) bool {
	for _, p := range pltCFA {
		if bytes.Equal(expr, p) {
			return true
		}
	}
	return false
}

// reader reads a section's bytes at off, up to end.
type reader struct {
	b     []byte
	off   uint64
	end   uint64
	order binary.ByteOrder
}

func (r *reader) limit() uint64 {
	if r.end != 0 && r.end <= uint64(len(r.b)) {
		return r.end
	}
	return uint64(len(r.b))
}

func (r *reader) take(n uint64) ([]byte, bool) {
	if r.off+n > r.limit() || r.off+n < r.off {
		return nil, false
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, true
}

// uint reads an n-byte unsigned number (n is 1, 2, 4 or 8).
func (r *reader) uint(n int) (uint64, bool) {
	b, ok := r.take(uint64(n))
	if !ok {
		return 0, false
	}
	switch n {
	case 1:
		return uint64(b[0]), true
	case 2:
		return uint64(r.order.Uint16(b)), true
	case 4:
		return uint64(r.order.Uint32(b)), true
	}
	return r.order.Uint64(b), true
}

func (r *reader) u8() (byte, bool) {
	b, ok := r.take(1)
	if !ok {
		return 0, false
	}
	return b[0], true
}

func (r *reader) u16() (uint16, bool) {
	b, ok := r.take(2)
	if !ok {
		return 0, false
	}
	return r.order.Uint16(b), true
}

func (r *reader) u32() (uint32, bool) {
	b, ok := r.take(4)
	if !ok {
		return 0, false
	}
	return r.order.Uint32(b), true
}

func (r *reader) u64() (uint64, bool) {
	b, ok := r.take(8)
	if !ok {
		return 0, false
	}
	return r.order.Uint64(b), true
}

func (r *reader) uleb() (uint64, bool) {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c, ok := r.u8()
		if !ok {
			return 0, false
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

func (r *reader) sleb() (int64, bool) {
	var v int64
	var shift uint
	for shift < 70 {
		c, ok := r.u8()
		if !ok {
			return 0, false
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, true
		}
	}
	return 0, false
}

// operand reads a signed (SLEB128) or unsigned (ULEB128) operand times
// factor.
func (r *reader) operand(signed bool, factor int64) (int64, bool) {
	if signed {
		v, ok := r.sleb()
		return v * factor, ok
	}
	v, ok := r.uleb()
	return int64(v) * factor, ok
}

func (r *reader) cstring() ([]byte, bool) {
	lim := r.limit()
	for i := r.off; i < lim; i++ {
		if r.b[i] == 0 {
			s := r.b[r.off:i]
			r.off = i + 1
			return s, true
		}
	}
	return nil, false
}

func (r *reader) block() ([]byte, bool) {
	n, ok := r.uleb()
	if !ok {
		return nil, false
	}
	return r.take(n)
}

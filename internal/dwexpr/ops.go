package dwexpr

import (
	"fmt"

	"github.com/binscope/binscope/internal/leb128"
)

// DWARF expression opcodes (DWARF 5 section 7.7.1, and the GNU extensions
// DWARF 5 standardised).
const (
	opAddr            = 0x03
	opDeref           = 0x06
	opConst1u         = 0x08
	opConst1s         = 0x09
	opConst2u         = 0x0a
	opConst2s         = 0x0b
	opConst4u         = 0x0c
	opConst4s         = 0x0d
	opConst8u         = 0x0e
	opConst8s         = 0x0f
	opConstu          = 0x10
	opConsts          = 0x11
	opDup             = 0x12
	opDrop            = 0x13
	opOver            = 0x14
	opPick            = 0x15
	opSwap            = 0x16
	opRot             = 0x17
	opAbs             = 0x19
	opAnd             = 0x1a
	opDiv             = 0x1b
	opMinus           = 0x1c
	opMod             = 0x1d
	opMul             = 0x1e
	opNeg             = 0x1f
	opNot             = 0x20
	opOr              = 0x21
	opPlus            = 0x22
	opPlusUconst      = 0x23
	opShl             = 0x24
	opShr             = 0x25
	opShra            = 0x26
	opXor             = 0x27
	opBra             = 0x28
	opEq              = 0x29
	opGe              = 0x2a
	opGt              = 0x2b
	opLe              = 0x2c
	opLt              = 0x2d
	opNe              = 0x2e
	opSkip            = 0x2f
	opLit0            = 0x30
	opLit31           = 0x4f
	opReg0            = 0x50
	opReg31           = 0x6f
	opBreg0           = 0x70
	opBreg31          = 0x8f
	opRegx            = 0x90
	opFbreg           = 0x91
	opBregx           = 0x92
	opPiece           = 0x93
	opDerefSize       = 0x94
	opNop             = 0x96
	opCallFrameCFA    = 0x9c
	opImplicitVal     = 0x9e
	opStackValue      = 0x9f
	opAddrx           = 0xa1
	opEntryValue      = 0xa3
	opConstType       = 0xa4
	opRegvalType      = 0xa5
	opDerefType       = 0xa6
	opConvert         = 0xa8
	opReinterpret     = 0xa9
	opGNUEntryVal     = 0xf3
	opGNUConstType    = 0xf4
	opGNURegvalType   = 0xf5
	opGNUDerefType    = 0xf6
	opGNUConvert      = 0xf7
	opGNUReinterpret  = 0xf9
	opGNUParameterRef = 0xfa
	opGNUAddrIndex    = 0xfb // DW_OP_addrx of DWARF 4 split units
)

// op is one operation as the expression encodes it: its code, its
// operands, and where it starts (branch targets are byte offsets).
type op struct {
	code  byte
	pos   int
	end   int    // where the next operation starts
	u, u2 uint64 // unsigned operands (a register, a size, a type offset)
	s     int64  // the signed operand (an offset, a constant, a branch)
	block []byte // DW_OP_entry_value's expression, DW_OP_implicit_value's and DW_OP_const_type's bytes
}

// opName names the opcodes this package does not evaluate, for messages.
var opName = map[byte]string{
	0x18: "DW_OP_xderef", 0x95: "DW_OP_xderef_size", 0x97: "DW_OP_push_object_address",
	0x98: "DW_OP_call2", 0x99: "DW_OP_call4", 0x9a: "DW_OP_call_ref", 0x9b: "DW_OP_form_tls_address",
	0x9d: "DW_OP_bit_piece", 0xa0: "DW_OP_implicit_pointer", 0xa2: "DW_OP_constx", 0xa7: "DW_OP_xderef_type",
	0xe0: "DW_OP_GNU_push_tls_address", 0xf0: "DW_OP_GNU_uninit", 0xf1: "DW_OP_GNU_encoded_addr",
	0xf2: "DW_OP_GNU_implicit_pointer", 0xfb: "DW_OP_GNU_addr_index", 0xfc: "DW_OP_GNU_const_index",
	0xfd: "DW_OP_GNU_variable_value",
}

// parse splits expr into operations, reading each one's operands; an
// opcode this package does not know, or a truncated operand, is an error.
func parse(expr []byte, o *Options) ([]op, error) {
	var ops []op
	for pos := 0; pos < len(expr); {
		p := op{code: expr[pos], pos: pos}
		b := expr[pos+1:]
		n, err := p.operands(b, o)
		if err != nil {
			return nil, err
		}
		pos += 1 + n
		p.end = pos
		ops = append(ops, p)
	}
	return ops, nil
}

// operands reads p's operands from b and returns how many bytes they take.
func (p *op) operands(b []byte, o *Options) (int, error) {
	short := fmt.Errorf("opcode %#x at %d: truncated operand", p.code, p.pos)
	var n int
	bad := false
	uleb := func() uint64 { return leb(b, &n, &bad, leb128.Uint) }
	sleb := func() int64 { return leb(b, &n, &bad, leb128.Int) }
	fixed := func(k int) bool {
		if len(b) < k {
			return false
		}
		n = k
		return true
	}
	c := p.code
	switch {
	case c >= opLit0 && c <= opLit31, c >= opReg0 && c <= opReg31:
	case c >= opBreg0 && c <= opBreg31:
		p.s = sleb()
	case c == opAddr:
		if !fixed(o.AddrSize) {
			return 0, short
		}
		p.u = readAddr(b, o)
	case c >= opConst1u && c <= opConst8s:
		size := 1 << ((c - opConst1u) / 2)
		if !fixed(size) {
			return 0, short
		}
		p.s = fixedInt(b[:size], o, c%2 == 1)
	case c == opConstu, c == opPlusUconst, c == opRegx, c == opPiece, c == opAddrx, c == opGNUAddrIndex, c == opConvert, c == opGNUConvert,
		c == opReinterpret, c == opGNUReinterpret:
		p.u = uleb()
	case c == opConsts, c == opFbreg:
		p.s = sleb()
	case c == opBregx:
		p.u = uleb()
		p.s = sleb()
	case c == opPick, c == opDerefSize:
		if !fixed(1) {
			return 0, short
		}
		p.u = uint64(b[0])
	case c == opSkip, c == opBra:
		if !fixed(2) {
			return 0, short
		}
		p.s = int64(int16(o.Order.Uint16(b)))
	case c == opImplicitVal, c == opEntryValue, c == opGNUEntryVal:
		l := uleb()
		if bad || uint64(len(b)-n) < l {
			return 0, short
		}
		p.block = b[n : n+int(l)]
		n += int(l)
	case c == opConstType, c == opGNUConstType:
		p.u = uleb()
		if bad || n >= len(b) || len(b)-n-1 < int(b[n]) {
			return 0, short
		}
		l := int(b[n])
		p.block = b[n+1 : n+1+l]
		n += 1 + l
	case c == opRegvalType, c == opGNURegvalType:
		p.u = uleb()
		p.u2 = uleb()
	case c == opDerefType, c == opGNUDerefType:
		if !fixed(1) {
			return 0, short
		}
		p.s = int64(b[0])
		p.u = uleb()
	case c == opGNUParameterRef:
		if !fixed(4) {
			return 0, short
		}
		p.u = uint64(o.Order.Uint32(b))
	case c == opDeref, c == opDup, c == opDrop, c == opOver, c == opSwap, c == opRot, c == opAbs, c == opAnd,
		c == opDiv, c == opMinus, c == opMod, c == opMul, c == opNeg, c == opNot, c == opOr, c == opPlus,
		c == opShl, c == opShr, c == opShra, c == opXor, c >= opEq && c <= opNe, c == opNop,
		c == opCallFrameCFA, c == opStackValue:
	default:
		if name, ok := opName[c]; ok {
			return 0, fmt.Errorf("%s is not evaluated", name)
		}
		return 0, fmt.Errorf("unknown opcode %#x", c)
	}
	if bad || n > len(b) {
		return 0, short
	}
	return n, nil
}

func readAddr(b []byte, o *Options) uint64 {
	if o.AddrSize == 4 {
		return uint64(o.Order.Uint32(b))
	}
	return o.Order.Uint64(b)
}

// fixedInt reads a 1-, 2-, 4- or 8-byte integer.
func fixedInt(b []byte, o *Options, signed bool) int64 {
	switch len(b) {
	case 1:
		if signed {
			return int64(int8(b[0]))
		}
		return int64(b[0])
	case 2:
		if signed {
			return int64(int16(o.Order.Uint16(b)))
		}
		return int64(o.Order.Uint16(b))
	case 4:
		if signed {
			return int64(int32(o.Order.Uint32(b)))
		}
		return int64(o.Order.Uint32(b))
	}
	return int64(o.Order.Uint64(b))
}

// leb reads a LEB128 number at b[*n:] with read, moving *n past it; a
// truncated one sets *bad (and every later read gives 0).
func leb[T int64 | uint64](b []byte, n *int, bad *bool, read func([]byte) (T, int)) T {
	if *bad {
		return 0
	}
	v, k := read(b[*n:])
	*bad = k == 0
	*n += k
	return v
}

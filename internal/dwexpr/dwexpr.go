// Package dwexpr decodes DWARF location expressions into the model's
// types.Loc: registers, register- or frame-relative memory, static
// addresses, constants and multi-piece values. It decodes the forms
// compilers emit for parameters and variables; anything else becomes a
// LocExpr piece holding the expression's bytes, never a guess.
package dwexpr

import (
	"encoding/binary"
	"fmt"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/leb128"
	"github.com/binscope/binscope/types"
)

// Options say how to read an expression.
type Options struct {
	Arch     *arch.Arch
	AddrSize int
	Order    binary.ByteOrder
	// FrameBase is the function's DW_AT_frame_base expression, which
	// DW_OP_fbreg offsets are relative to.
	FrameBase []byte
	// Addrx resolves a .debug_addr index (DW_OP_addrx); nil: unsupported.
	Addrx func(uint64) (uint64, bool)
}

// DWARF expression opcodes used here.
const (
	opAddr         = 0x03
	opDeref        = 0x06
	opConst1u      = 0x08
	opConst1s      = 0x09
	opConst2u      = 0x0a
	opConst2s      = 0x0b
	opConst4u      = 0x0c
	opConst4s      = 0x0d
	opConst8u      = 0x0e
	opConst8s      = 0x0f
	opConstu       = 0x10
	opConsts       = 0x11
	opPlusUconst   = 0x23
	opLit0         = 0x30
	opLit31        = 0x4f
	opReg0         = 0x50
	opReg31        = 0x6f
	opBreg0        = 0x70
	opBreg31       = 0x8f
	opRegx         = 0x90
	opFbreg        = 0x91
	opBregx        = 0x92
	opPiece        = 0x93
	opCallFrameCFA = 0x9c
	opImplicitVal  = 0x9e
	opStackValue   = 0x9f
	opAddrx        = 0xa1
	opEntryValue   = 0xa3
	opGNUEntryVal  = 0xf3
)

// state is what the ops of the current piece have computed so far.
type state struct {
	kind  types.LocKind
	set   bool
	reg   arch.Reg
	off   int64
	value bool // DW_OP_stack_value seen: the result is a value, not an address
	bad   bool
}

// Decode turns expr into a Loc. An empty expression is a value optimised
// out (no pieces).
func Decode(expr []byte, o *Options) types.Loc {
	var loc types.Loc
	if len(expr) == 0 {
		return loc
	}
	unsupported := func() types.Loc {
		return types.Loc{Pieces: []types.Piece{{Kind: types.LocExpr, Expr: fmt.Sprintf("% x", expr)}}}
	}
	var st state
	b := expr
	flush := func(size int64) bool {
		if st.bad {
			return false
		}
		if !st.set { // DW_OP_piece alone: this part is optimised out
			if size > 0 {
				loc.Pieces = append(loc.Pieces, types.Piece{Kind: types.LocExpr, Expr: "optimized out", Size: size})
			}
			return true
		}
		p := types.Piece{Kind: st.kind, Reg: st.reg.Name, Offset: st.off, Size: size, Vector: st.reg.Vector}
		if st.value {
			switch st.kind {
			case types.LocAddr: // a constant pushed, then stack_value
				p.Kind = types.LocConst
			default:
				return false
			}
		}
		loc.Pieces = append(loc.Pieces, p)
		st = state{}
		return true
	}
	for len(b) > 0 {
		op := b[0]
		b = b[1:]
		var n int
		switch {
		case op >= opReg0 && op <= opReg31:
			st = state{kind: types.LocReg, set: true, reg: o.Arch.RegName(int(op - opReg0))}
		case op == opRegx:
			r, k := uleb(b)
			n = k
			st = state{kind: types.LocReg, set: true, reg: o.Arch.RegName(int(r))}
		case op >= opBreg0 && op <= opBreg31:
			off, k := sleb(b)
			n = k
			st = state{kind: types.LocMem, set: true, reg: o.Arch.RegName(int(op - opBreg0)), off: off}
		case op == opBregx:
			r, k := uleb(b)
			off, k2 := sleb(b[k:])
			n = k + k2
			st = state{kind: types.LocMem, set: true, reg: o.Arch.RegName(int(r)), off: off}
		case op == opFbreg:
			off, k := sleb(b)
			n = k
			fb := Decode(o.FrameBase, &Options{Arch: o.Arch, AddrSize: o.AddrSize, Order: o.Order})
			switch {
			case len(o.FrameBase) == 1 && o.FrameBase[0] == opCallFrameCFA:
				st = state{kind: types.LocCFA, set: true, off: off}
			case len(fb.Pieces) == 1 && fb.Pieces[0].Kind == types.LocReg:
				st = state{kind: types.LocMem, set: true, reg: arch.Reg{Name: fb.Pieces[0].Reg}, off: off}
			default:
				return unsupported()
			}
		case op == opCallFrameCFA:
			st = state{kind: types.LocCFA, set: true}
		case op == opPlusUconst:
			v, k := uleb(b)
			n = k
			if !st.set || st.kind == types.LocReg {
				return unsupported()
			}
			st.off += int64(v)
		case op == opAddr:
			if len(b) < o.AddrSize {
				return unsupported()
			}
			st = state{kind: types.LocAddr, set: true, off: int64(readAddr(b, o))}
			n = o.AddrSize
		case op == opAddrx:
			i, k := uleb(b)
			n = k
			if o.Addrx == nil {
				return unsupported()
			}
			a, ok := o.Addrx(i)
			if !ok {
				return unsupported()
			}
			st = state{kind: types.LocAddr, set: true, off: int64(a)}
		case op >= opLit0 && op <= opLit31:
			st = state{kind: types.LocAddr, set: true, off: int64(op - opLit0)}
		case op >= opConst1u && op <= opConsts:
			v, k, ok := constant(op, b, o)
			if !ok {
				return unsupported()
			}
			n = k
			st = state{kind: types.LocAddr, set: true, off: v}
		case op == opStackValue:
			st.value = true
		case op == opImplicitVal:
			l, k := uleb(b)
			if l > 8 || uint64(len(b)-k) < l {
				return unsupported()
			}
			var v uint64
			for i := int(l) - 1; i >= 0; i-- {
				v = v<<8 | uint64(b[k+i])
			}
			n = k + int(l)
			st = state{kind: types.LocAddr, set: true, off: int64(v), value: true}
		case op == opEntryValue || op == opGNUEntryVal:
			l, k := uleb(b)
			if uint64(len(b)-k) < l {
				return unsupported()
			}
			sub := Decode(b[k:k+int(l)], o)
			if len(sub.Pieces) != 1 || sub.Pieces[0].Kind != types.LocReg {
				return unsupported()
			}
			n = k + int(l)
			r := sub.Pieces[0]
			st = state{kind: types.LocEntry, set: true, reg: arch.Reg{Name: r.Reg, Vector: r.Vector}}
		case op == opPiece:
			sz, k := uleb(b)
			n = k
			if !flush(int64(sz)) {
				return unsupported()
			}
		default: // DW_OP_deref, arithmetic, bit pieces...
			return unsupported()
		}
		if n < 0 || n > len(b) || (n == 0 && needsOperand(op)) {
			return unsupported()
		}
		b = b[n:]
	}
	if st.set || st.bad {
		if !flush(0) {
			return unsupported()
		}
	}
	return loc
}

func needsOperand(op byte) bool {
	switch {
	case op >= opReg0 && op <= opReg31, op >= opLit0 && op <= opLit31,
		op == opStackValue, op == opCallFrameCFA, op == opAddr:
		return false
	}
	return true
}

func readAddr(b []byte, o *Options) uint64 {
	if o.AddrSize == 4 {
		return uint64(o.Order.Uint32(b))
	}
	return o.Order.Uint64(b)
}

func constant(op byte, b []byte, o *Options) (int64, int, bool) {
	need := map[byte]int{opConst1u: 1, opConst1s: 1, opConst2u: 2, opConst2s: 2, opConst4u: 4, opConst4s: 4, opConst8u: 8, opConst8s: 8}
	if k, ok := need[op]; ok && len(b) < k {
		return 0, 0, false
	}
	switch op {
	case opConst1u:
		return int64(b[0]), 1, true
	case opConst1s:
		return int64(int8(b[0])), 1, true
	case opConst2u:
		return int64(o.Order.Uint16(b)), 2, true
	case opConst2s:
		return int64(int16(o.Order.Uint16(b))), 2, true
	case opConst4u:
		return int64(o.Order.Uint32(b)), 4, true
	case opConst4s:
		return int64(int32(o.Order.Uint32(b))), 4, true
	case opConst8u, opConst8s:
		return int64(o.Order.Uint64(b)), 8, true
	case opConstu:
		v, k := uleb(b)
		return int64(v), k, k > 0
	case opConsts:
		v, k := sleb(b)
		return v, k, k > 0
	}
	return 0, 0, false
}

// uleb and sleb decode LEB128 (package leb128); they return 0 bytes read
// for truncated input.
func uleb(b []byte) (uint64, int) { return leb128.Uint(b) }
func sleb(b []byte) (int64, int)  { return leb128.Int(b) }

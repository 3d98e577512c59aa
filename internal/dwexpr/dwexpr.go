// Package dwexpr decodes DWARF location expressions into the model's
// types.Loc: registers, register- or frame-relative memory, static
// addresses, constants, entry values and multi-piece values in their own
// kinds, and any other expression a stack machine can evaluate (arithmetic,
// dereferences, typed conversions, forward branches) as the operations of a
// LocValue or LocAt piece (types.Op), which a probe compiles to BPF. What
// cannot be evaluated from registers and memory (TLS, implicit pointers,
// DWARF procedure calls, floating-point types) becomes a LocExpr piece that
// says why, never a guess.
package dwexpr

import (
	"encoding/binary"
	"fmt"

	"github.com/binscope/binscope/internal/arch"
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
	// BaseType describes the base type whose DIE is at offset off from the
	// compile unit's header (DW_OP_convert and the other typed
	// operations): its size in bytes, and whether it is signed or a
	// floating-point type. nil, or ok false: typed operations are not
	// evaluated.
	BaseType func(off uint64) (size int64, signed, float, ok bool)
	// Unit is the offset of the compile unit's header in .debug_info:
	// DW_OP_GNU_parameter_ref's operand is relative to it.
	Unit uint64
}

// Decode turns expr into a Loc. An empty expression is a value optimised
// out (no pieces).
func Decode(expr []byte, o *Options) types.Loc {
	var loc types.Loc
	if len(expr) == 0 {
		return loc
	}
	unsupported := func(err error) types.Loc {
		return types.Loc{Pieces: []types.Piece{{Kind: types.LocExpr, Expr: fmt.Sprintf("% x: %v", expr, err)}}}
	}
	ops, err := parse(expr, o)
	if err != nil {
		return unsupported(err)
	}
	start := 0
	for i, p := range ops {
		if p.code != opPiece {
			continue
		}
		piece, err := decodePiece(ops[start:i], int64(p.u), o)
		if err != nil {
			return unsupported(err)
		}
		loc.Pieces = append(loc.Pieces, piece)
		start = i + 1
	}
	if start < len(ops) || start == 0 {
		piece, err := decodePiece(ops[start:], 0, o)
		if err != nil {
			return unsupported(err)
		}
		loc.Pieces = append(loc.Pieces, piece)
	}
	return loc
}

// decodePiece decodes the operations of one piece of size bytes (0: the
// whole value).
func decodePiece(ops []op, size int64, o *Options) (types.Piece, error) {
	if len(ops) == 0 { // DW_OP_piece alone: this part is optimised out
		if size == 0 {
			return types.Piece{}, fmt.Errorf("an empty piece")
		}
		return types.Piece{Kind: types.LocExpr, Expr: "optimized out", Size: size}, nil
	}
	first := ops[0]
	switch {
	case len(ops) == 1 && first.code >= opReg0 && first.code <= opReg31, len(ops) == 1 && first.code == opRegx:
		n := int(first.u)
		if first.code != opRegx {
			n = int(first.code - opReg0)
		}
		r := o.Arch.RegName(n)
		return types.Piece{Kind: types.LocReg, Reg: r.Name, Size: size, Vector: r.Vector}, nil
	case len(ops) == 1 && first.code == opImplicitVal:
		if len(first.block) > 8 {
			return types.Piece{}, fmt.Errorf("an implicit value of %d bytes", len(first.block))
		}
		var v uint64
		for i := len(first.block) - 1; i >= 0; i-- {
			v = v<<8 | uint64(first.block[i])
		}
		return types.Piece{Kind: types.LocConst, Offset: int64(v), Size: size}, nil
	}
	value := false
	if last := ops[len(ops)-1]; last.code == opStackValue {
		value = true
		ops = ops[:len(ops)-1]
	}
	t := translator{o: o}
	out, err := t.translate(ops)
	if err != nil {
		return types.Piece{}, err
	}
	if err := types.CheckOps(out); err != nil {
		return types.Piece{}, err
	}
	p := types.Piece{Kind: types.LocAt, Size: size, Ops: fold(out), Vector: t.vector}
	if value {
		p.Kind = types.LocValue
	}
	return simple(p), nil
}

// simple gives the forms every consumer knows their own kinds: a register's
// value, memory at a register, the frame or a static address plus an
// offset, a constant, an entry value.
func simple(p types.Piece) types.Piece {
	ops := p.Ops
	q := types.Piece{Size: p.Size, Vector: p.Vector}
	offset := func(i int) (int64, bool) { // ops[i:] is empty, or "const k; plus"
		switch {
		case len(ops) == i:
			return 0, true
		case len(ops) == i+2 && ops[i].Code == types.OpConst && ops[i+1].Code == types.OpPlus:
			return ops[i].Value, true
		}
		return 0, false
	}
	switch p.Kind {
	case types.LocValue:
		switch {
		case len(ops) == 1 && ops[0].Code == types.OpConst:
			q.Kind, q.Offset = types.LocConst, ops[0].Value
			return q
		case len(ops) == 1 && ops[0].Code == types.OpEntry:
			q.Kind, q.Reg = types.LocEntry, ops[0].Reg
			return q
		case len(ops) == 1 && ops[0].Code == types.OpReg:
			q.Kind, q.Reg = types.LocReg, ops[0].Reg
			return q
		}
	case types.LocAt:
		if len(ops) == 0 {
			break
		}
		off, ok := offset(1)
		if !ok {
			break
		}
		switch ops[0].Code {
		case types.OpReg:
			q.Kind, q.Reg, q.Offset = types.LocMem, ops[0].Reg, off
			return q
		case types.OpCFA:
			q.Kind, q.Offset = types.LocCFA, off
			return q
		case types.OpAddr:
			q.Kind, q.Offset = types.LocAddr, ops[0].Value+off
			return q
		}
	}
	return p
}

// fold merges constant offsets: "const a; plus; const b; plus" is
// "const a+b; plus", "const k; minus" is "const -k; plus", and "const 0;
// plus" goes. Expressions that branch are left as they are (their
// operation counts are branch distances).
func fold(ops []types.Op) []types.Op {
	for _, o := range ops {
		if o.Code == types.OpSkip || o.Code == types.OpBra {
			return ops
		}
	}
	var out []types.Op
	for _, o := range ops {
		n := len(out)
		switch {
		case o.Code == types.OpMinus && n > 0 && out[n-1].Code == types.OpConst && out[n-1].Value != -1<<63:
			out[n-1].Value = -out[n-1].Value
			o.Code = types.OpPlus
		}
		if o.Code == types.OpPlus && n > 0 && out[n-1].Code == types.OpConst {
			k := out[n-1].Value
			switch {
			case k == 0:
				out = out[:n-1]
				continue
			case n >= 3 && out[n-2].Code == types.OpPlus && out[n-3].Code == types.OpConst:
				out[n-3].Value += k
				out = out[:n-1]
				if out[n-3].Value == 0 {
					out = out[:n-3]
				}
				continue
			}
		}
		out = append(out, o)
	}
	return out
}

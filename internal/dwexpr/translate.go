package dwexpr

import (
	"fmt"

	"github.com/binscope/binscope/types"
)

// typ is the type of a value on the DWARF stack: the generic type (an
// address-sized integer, size 0 here) or a base type. The stack machine of
// types.Op holds every value as 64 bits: a base type's value extended by
// its signedness, which operations on it keep so.
type typ struct {
	size   int64 // 0: the generic type
	signed bool
}

// translator turns DWARF operations into types.Op, following the type of
// each stack entry.
type translator struct {
	o      *Options
	out    []types.Op
	stack  []typ
	vector bool // a vector register is read: not readable by a uprobe
	depth  int  // nesting of DW_OP_entry_value and the frame base
}

func (t *translator) emit(ops ...types.Op) { t.out = append(t.out, ops...) }

func (t *translator) push(ty typ) { t.stack = append(t.stack, ty) }

func (t *translator) pop(n int) ([]typ, error) {
	if len(t.stack) < n {
		return nil, fmt.Errorf("the stack holds %d values, an operation needs %d", len(t.stack), n)
	}
	got := append([]typ(nil), t.stack[len(t.stack)-n:]...)
	t.stack = t.stack[:len(t.stack)-n]
	return got, nil
}

// normalize puts a value of type ty computed in 64 bits back in ty.
func (t *translator) normalize(ty typ) {
	switch {
	case ty.size == 0 || ty.size >= 8:
	case ty.signed:
		t.emit(types.Op{Code: types.OpSext, Value: ty.size})
	default:
		t.emit(types.Op{Code: types.OpZext, Value: ty.size})
	}
}

// baseType resolves a typed operation's type operand (0: generic).
func (t *translator) baseType(off uint64) (typ, error) {
	if off == 0 {
		return typ{}, nil
	}
	if t.o.BaseType == nil {
		return typ{}, fmt.Errorf("typed operations need the unit's base types")
	}
	size, signed, float, ok := t.o.BaseType(off)
	switch {
	case !ok:
		return typ{}, fmt.Errorf("no base type at unit offset %#x", off)
	case float:
		return typ{}, fmt.Errorf("a floating-point value on the stack")
	case size < 1 || size > 8:
		return typ{}, fmt.Errorf("a base type of %d bytes", size)
	}
	if size == 8 && !signed {
		return typ{size: 8}, nil
	}
	return typ{size: size, signed: signed}, nil
}

func (t *translator) reg(n uint64) types.Op {
	r := t.o.Arch.RegName(int(n))
	t.vector = t.vector || r.Vector
	return types.Op{Code: types.OpReg, Reg: r.Name}
}

// binary ops by DWARF opcode: the operation for the generic or a signed
// type, and for an unsigned base type.
var binaryOps = map[byte][2]types.OpCode{
	opPlus: {types.OpPlus, types.OpPlus}, opMinus: {types.OpMinus, types.OpMinus}, opMul: {types.OpMul, types.OpMul},
	opAnd: {types.OpAnd, types.OpAnd}, opOr: {types.OpOr, types.OpOr}, opXor: {types.OpXor, types.OpXor},
	opShl: {types.OpShl, types.OpShl}, opDiv: {types.OpDiv, types.OpDivU},
	opEq: {types.OpEq, types.OpEq}, opNe: {types.OpNe, types.OpNe}, opLt: {types.OpLt, types.OpLtU},
	opGt: {types.OpGt, types.OpGtU}, opLe: {types.OpLe, types.OpLeU}, opGe: {types.OpGe, types.OpGeU},
}

// translate turns ops (one piece, without DW_OP_piece and a final
// DW_OP_stack_value) into the stack machine's operations.
func (t *translator) translate(ops []op) ([]types.Op, error) {
	// Branch targets: DWARF counts bytes, types.Op counts operations.
	index := map[int]int{}
	branches := false
	for _, p := range ops {
		branches = branches || p.code == opSkip || p.code == opBra
	}
	var fixups []struct{ at, target int }
	for _, p := range ops {
		index[p.pos] = len(t.out)
		before := len(t.out)
		if err := t.one(p); err != nil {
			return nil, err
		}
		if branches && len(t.stack) > 0 && t.stack[len(t.stack)-1] != (typ{}) {
			return nil, fmt.Errorf("typed values in an expression that branches")
		}
		if p.code == opSkip || p.code == opBra {
			fixups = append(fixups, struct{ at, target int }{before, p.end + int(p.s)})
		}
	}
	endPos := -1
	if len(ops) > 0 {
		endPos = ops[len(ops)-1].end
	}
	for _, f := range fixups {
		to, ok := index[f.target]
		if !ok {
			if f.target != endPos {
				return nil, fmt.Errorf("a branch to byte %d, not an operation of the piece", f.target)
			}
			to = len(t.out)
		}
		t.out[f.at].Value = int64(to - f.at - 1)
	}
	if len(t.stack) == 0 {
		return nil, fmt.Errorf("the expression leaves no value")
	}
	return t.out, nil
}

// one translates a single operation.
func (t *translator) one(p op) error {
	c := p.code
	switch {
	case c >= opLit0 && c <= opLit31:
		t.emit(types.Op{Code: types.OpConst, Value: int64(c - opLit0)})
		t.push(typ{})
	case c >= opConst1u && c <= opConsts:
		t.emit(types.Op{Code: types.OpConst, Value: p.s})
		if c == opConstu {
			t.out[len(t.out)-1].Value = int64(p.u)
		}
		t.push(typ{})
	case c == opAddr:
		t.emit(types.Op{Code: types.OpAddr, Value: int64(p.u)})
		t.push(typ{})
	case c == opAddrx:
		if t.o.Addrx == nil {
			return fmt.Errorf("DW_OP_addrx without .debug_addr")
		}
		a, ok := t.o.Addrx(p.u)
		if !ok {
			return fmt.Errorf("DW_OP_addrx %d: no such .debug_addr entry", p.u)
		}
		t.emit(types.Op{Code: types.OpAddr, Value: int64(a)})
		t.push(typ{})
	case c >= opBreg0 && c <= opBreg31, c == opBregx:
		n := p.u
		if c != opBregx {
			n = uint64(c - opBreg0)
		}
		t.emit(t.reg(n))
		if p.s != 0 {
			t.emit(types.Op{Code: types.OpConst, Value: p.s}, types.Op{Code: types.OpPlus})
		}
		t.push(typ{})
	case c >= opReg0 && c <= opReg31, c == opRegx:
		return fmt.Errorf("a register location inside an expression")
	case c == opFbreg:
		if err := t.frameBase(); err != nil {
			return err
		}
		if p.s != 0 {
			t.emit(types.Op{Code: types.OpConst, Value: p.s}, types.Op{Code: types.OpPlus})
		}
		t.push(typ{})
	case c == opCallFrameCFA:
		t.emit(types.Op{Code: types.OpCFA})
		t.push(typ{})
	case c == opEntryValue || c == opGNUEntryVal:
		return t.entryValue(p.block)
	case c == opGNUParameterRef:
		t.emit(types.Op{Code: types.OpParam, Value: int64(t.o.Unit + p.u)})
		t.push(typ{})
	case c == opDeref || c == opDerefSize:
		if _, err := t.pop(1); err != nil {
			return err
		}
		size := int64(t.o.AddrSize)
		if c == opDerefSize {
			size = int64(p.u)
		}
		if size < 1 || size > 8 {
			return fmt.Errorf("a dereference of %d bytes", size)
		}
		t.emit(types.Op{Code: types.OpDeref, Value: size})
		t.push(typ{})
	case c == opDerefType || c == opGNUDerefType:
		ty, err := t.baseType(p.u)
		if err != nil {
			return err
		}
		if _, err := t.pop(1); err != nil {
			return err
		}
		if p.s < 1 || p.s > 8 || ty.size != 0 && ty.size != p.s {
			return fmt.Errorf("a typed dereference of %d bytes", p.s)
		}
		t.emit(types.Op{Code: types.OpDeref, Value: p.s})
		if ty.signed {
			t.normalize(ty)
		}
		t.push(ty)
	case c == opConstType || c == opGNUConstType:
		ty, err := t.baseType(p.u)
		if err != nil {
			return err
		}
		if len(p.block) > 8 || ty.size != 0 && int64(len(p.block)) != ty.size {
			return fmt.Errorf("a typed constant of %d bytes", len(p.block))
		}
		var v uint64
		for i := len(p.block) - 1; i >= 0; i-- {
			v = v<<8 | uint64(p.block[i])
		}
		t.emit(types.Op{Code: types.OpConst, Value: int64(v)})
		t.normalize(ty)
		t.push(ty)
	case c == opRegvalType || c == opGNURegvalType:
		ty, err := t.baseType(p.u2)
		if err != nil {
			return err
		}
		t.emit(t.reg(p.u))
		t.normalize(ty)
		t.push(ty)
	case c == opConvert || c == opGNUConvert || c == opReinterpret || c == opGNUReinterpret:
		ty, err := t.baseType(p.u)
		if err != nil {
			return err
		}
		from, err := t.pop(1)
		if err != nil {
			return err
		}
		if (c == opReinterpret || c == opGNUReinterpret) && from[0].size != ty.size && from[0].size != 0 && ty.size != 0 {
			return fmt.Errorf("a reinterpretation between sizes")
		}
		t.normalize(ty)
		t.push(ty)
	case c == opPlusUconst:
		ty, err := t.pop(1)
		if err != nil {
			return err
		}
		t.emit(types.Op{Code: types.OpConst, Value: int64(p.u)}, types.Op{Code: types.OpPlus})
		t.normalize(ty[0])
		t.push(ty[0])
	case binaryOps[c] != [2]types.OpCode{}:
		ts, err := t.pop(2)
		if err != nil {
			return err
		}
		ty, err := t.unify(ts, c == opShl)
		if err != nil {
			return err
		}
		code := binaryOps[c][0]
		if ty.size != 0 && !ty.signed {
			code = binaryOps[c][1]
		}
		t.emit(types.Op{Code: code})
		if c >= opEq && c <= opNe {
			t.push(typ{})
			break
		}
		t.normalize(ty)
		t.push(ty)
	case c == opMod:
		ts, err := t.pop(2)
		if err != nil {
			return err
		}
		ty, err := t.unify(ts, false)
		if err != nil {
			return err
		}
		code := types.OpMod
		if ty.signed {
			code = types.OpModS
		}
		t.emit(types.Op{Code: code})
		t.normalize(ty)
		t.push(ty)
	case c == opShr || c == opShra:
		ts, err := t.pop(2)
		if err != nil {
			return err
		}
		ty := ts[0]
		if ty.size != 0 && ty.size < 8 && ty.signed != (c == opShra) {
			// A logical shift of a signed narrow value (or an
			// arithmetic one of an unsigned) sees the bits above
			// the type's width: rare enough not to be evaluated.
			return fmt.Errorf("a shift across the signedness of a %d-byte type", ty.size)
		}
		code := types.OpShr
		if c == opShra {
			code = types.OpShra
		}
		t.emit(types.Op{Code: code})
		t.normalize(ty)
		t.push(ty)
	case c == opNeg || c == opNot || c == opAbs:
		ty, err := t.pop(1)
		if err != nil {
			return err
		}
		t.emit(types.Op{Code: map[byte]types.OpCode{opNeg: types.OpNeg, opNot: types.OpNot, opAbs: types.OpAbs}[c]})
		t.normalize(ty[0])
		t.push(ty[0])
	case c == opDup, c == opOver, c == opPick:
		k := 0
		switch c {
		case opOver:
			k = 1
		case opPick:
			k = int(p.u)
		}
		if k >= len(t.stack) {
			return fmt.Errorf("no stack entry %d to copy", k)
		}
		ty := t.stack[len(t.stack)-1-k]
		switch c {
		case opDup:
			t.emit(types.Op{Code: types.OpDup})
		case opOver:
			t.emit(types.Op{Code: types.OpOver})
		default:
			t.emit(types.Op{Code: types.OpPick, Value: int64(k)})
		}
		t.push(ty)
	case c == opDrop:
		if _, err := t.pop(1); err != nil {
			return err
		}
		t.emit(types.Op{Code: types.OpDrop})
	case c == opSwap:
		ts, err := t.pop(2)
		if err != nil {
			return err
		}
		t.emit(types.Op{Code: types.OpSwap})
		t.push(ts[1])
		t.push(ts[0])
	case c == opRot:
		ts, err := t.pop(3)
		if err != nil {
			return err
		}
		t.emit(types.Op{Code: types.OpRot})
		t.push(ts[2])
		t.push(ts[0])
		t.push(ts[1])
	case c == opSkip:
		if p.s < 0 {
			return fmt.Errorf("a branch backwards")
		}
		t.emit(types.Op{Code: types.OpSkip})
	case c == opBra:
		if p.s < 0 {
			return fmt.Errorf("a branch backwards")
		}
		if _, err := t.pop(1); err != nil {
			return err
		}
		t.emit(types.Op{Code: types.OpBra})
	case c == opNop:
	case c == opStackValue:
		return fmt.Errorf("DW_OP_stack_value before the end of a piece")
	case c == opImplicitVal:
		return fmt.Errorf("DW_OP_implicit_value inside an expression")
	default:
		return fmt.Errorf("opcode %#x is not evaluated", c)
	}
	return nil
}

// unify is the type a binary operation on operands of types ts (the
// second from the top, then the top) works in. DWARF wants them equal; LLVM
// also combines a base type's value with a generic constant (DW_OP_convert
// then DW_OP_constu 37; DW_OP_xor), which is taken as the constant in the
// base type: it is converted so. A shift's count may be of any type.
func (t *translator) unify(ts []typ, shift bool) (typ, error) {
	a, b := ts[0], ts[1]
	switch {
	case a == b || shift:
		return a, nil
	case b == typ{}: // the top is generic
		t.normalize(a)
		return a, nil
	case a == typ{}:
		t.emit(types.Op{Code: types.OpSwap})
		t.normalize(b)
		t.emit(types.Op{Code: types.OpSwap})
		return b, nil
	}
	return typ{}, fmt.Errorf("operands of different types")
}

// frameBase emits the function's frame base: DW_AT_frame_base is a
// location description whose register form (DW_OP_reg7) means the
// register's value, not its contents.
func (t *translator) frameBase() error {
	fb := t.o.FrameBase
	if len(fb) == 0 {
		return fmt.Errorf("DW_OP_fbreg without a frame base")
	}
	if t.depth > 0 {
		return fmt.Errorf("a frame base that uses the frame base")
	}
	ops, err := parse(fb, t.o)
	if err != nil {
		return fmt.Errorf("frame base: %v", err)
	}
	if len(ops) == 1 && (ops[0].code >= opReg0 && ops[0].code <= opReg31 || ops[0].code == opRegx) {
		n := ops[0].u
		if ops[0].code != opRegx {
			n = uint64(ops[0].code - opReg0)
		}
		t.emit(t.reg(n))
		return nil
	}
	sub := translator{o: t.o, depth: t.depth + 1}
	out, err := sub.translate(ops)
	if err != nil {
		return fmt.Errorf("frame base: %v", err)
	}
	t.vector = t.vector || sub.vector
	t.emit(out...)
	return nil
}

// entryValue emits DW_OP_entry_value's value: the value a register had
// at the function's entry (the block is DW_OP_regN).
func (t *translator) entryValue(block []byte) error {
	ops, err := parse(block, t.o)
	if err != nil {
		return fmt.Errorf("entry value: %v", err)
	}
	if len(ops) != 1 || !(ops[0].code >= opReg0 && ops[0].code <= opReg31 || ops[0].code == opRegx) {
		return fmt.Errorf("an entry value of memory")
	}
	n := ops[0].u
	if ops[0].code != opRegx {
		n = uint64(ops[0].code - opReg0)
	}
	r := t.o.Arch.RegName(int(n))
	t.vector = t.vector || r.Vector
	t.emit(types.Op{Code: types.OpEntry, Reg: r.Name})
	t.push(typ{})
	return nil
}

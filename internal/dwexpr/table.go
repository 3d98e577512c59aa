package dwexpr

import (
	"fmt"

	"github.com/binscope/binscope/types"
)

// translators translate one operation each, by DWARF opcode; an opcode
// with none is not evaluated. Filled by init: the functions reach the
// table again through frameBase and translate.
var translators [256]func(t *translator, p op) error

func init() {
	set := func(f func(*translator, op) error, codes ...byte) {
		for _, c := range codes {
			translators[c] = f
		}
	}
	span := func(f func(*translator, op) error, lo, hi byte) {
		for c := int(lo); c <= int(hi); c++ {
			translators[c] = f
		}
	}
	span(lit, opLit0, opLit31)
	span(constant, opConst1u, opConsts)
	set(addr, opAddr)
	set(addrx, opAddrx, opGNUAddrIndex)
	span(breg, opBreg0, opBreg31)
	set(breg, opBregx)
	span(regInside, opReg0, opReg31)
	set(regInside, opRegx)
	set(fbreg, opFbreg)
	set(callFrameCFA, opCallFrameCFA)
	set(entryValue, opEntryValue, opGNUEntryVal)
	set(parameterRef, opGNUParameterRef)
	set(deref, opDeref, opDerefSize)
	set(derefType, opDerefType, opGNUDerefType)
	set(constType, opConstType, opGNUConstType)
	set(regvalType, opRegvalType, opGNURegvalType)
	set(convert, opConvert, opGNUConvert, opReinterpret, opGNUReinterpret)
	set(plusUconst, opPlusUconst)
	for c := range binaryOps {
		set(arith, c)
	}
	set(mod, opMod)
	set(shift, opShr, opShra)
	set(unary, opNeg, opNot, opAbs)
	set(copyEntry, opDup, opOver, opPick)
	set(drop, opDrop)
	set(swap, opSwap)
	set(rot, opRot)
	set(skip, opSkip)
	set(bra, opBra)
	set(func(*translator, op) error { return nil }, opNop)
	set(func(*translator, op) error { return fmt.Errorf("DW_OP_stack_value before the end of a piece") }, opStackValue)
	set(func(*translator, op) error { return fmt.Errorf("DW_OP_implicit_value inside an expression") }, opImplicitVal)
}

// one translates a single operation.
func (t *translator) one(p op) error {
	if f := translators[p.code]; f != nil {
		return f(t, p)
	}
	return fmt.Errorf("opcode %#x is not evaluated", p.code)
}

// lit: DW_OP_lit0 to DW_OP_lit31 push their number.
func lit(t *translator, p op) error {
	t.emit(types.Op{Code: types.OpConst, Value: int64(p.code - opLit0)})
	t.push(typ{})
	return nil
}

// constant: DW_OP_const1u to DW_OP_consts push their operand.
func constant(t *translator, p op) error {
	v := p.s
	if p.code == opConstu {
		v = int64(p.u)
	}
	t.emit(types.Op{Code: types.OpConst, Value: v})
	t.push(typ{})
	return nil
}

// addr: DW_OP_addr pushes a static address.
func addr(t *translator, p op) error {
	t.emit(types.Op{Code: types.OpAddr, Value: int64(p.u)})
	t.push(typ{})
	return nil
}

// addrx: DW_OP_addrx pushes the static address at an index of
// .debug_addr.
func addrx(t *translator, p op) error {
	if t.o.Addrx == nil {
		return fmt.Errorf("DW_OP_addrx without .debug_addr")
	}
	a, ok := t.o.Addrx(p.u)
	if !ok {
		return fmt.Errorf("DW_OP_addrx %d: no such .debug_addr entry", p.u)
	}
	t.emit(types.Op{Code: types.OpAddr, Value: int64(a)})
	t.push(typ{})
	return nil
}

// breg: DW_OP_bregN and DW_OP_bregx push a register's value plus an
// offset.
func breg(t *translator, p op) error {
	n := p.u
	if p.code != opBregx {
		n = uint64(p.code - opBreg0)
	}
	t.emit(t.reg(n))
	t.plus(p.s)
	t.push(typ{})
	return nil
}

// regInside: a register location (DW_OP_regN) is a whole location, not an
// operation of an expression.
func regInside(*translator, op) error {
	return fmt.Errorf("a register location inside an expression")
}

// fbreg: DW_OP_fbreg pushes the frame base plus an offset.
func fbreg(t *translator, p op) error {
	if err := t.frameBase(); err != nil {
		return err
	}
	t.plus(p.s)
	t.push(typ{})
	return nil
}

// plus emits the addition of off, when not 0, to the value on top.
func (t *translator) plus(off int64) {
	if off != 0 {
		t.emit(types.Op{Code: types.OpConst, Value: off}, types.Op{Code: types.OpPlus})
	}
}

// callFrameCFA: DW_OP_call_frame_cfa pushes the CFA.
func callFrameCFA(t *translator, _ op) error {
	t.emit(types.Op{Code: types.OpCFA})
	t.push(typ{})
	return nil
}

// entryValue: DW_OP_entry_value (and GNU's) pushes the value a register
// had at the function's entry.
func entryValue(t *translator, p op) error { return t.entryValue(p.block) }

// parameterRef: DW_OP_GNU_parameter_ref pushes the value of a parameter
// the compiler removed, which the callers give (by its DIE's offset).
func parameterRef(t *translator, p op) error {
	t.emit(types.Op{Code: types.OpParam, Value: int64(t.o.Unit + p.u)})
	t.push(typ{})
	return nil
}

// deref: DW_OP_deref and DW_OP_deref_size load from the address on top.
func deref(t *translator, p op) error {
	if _, err := t.pop(1); err != nil {
		return err
	}
	size := int64(t.o.AddrSize)
	if p.code == opDerefSize {
		size = int64(p.u)
	}
	if size < 1 || size > 8 {
		return fmt.Errorf("a dereference of %d bytes", size)
	}
	t.emit(types.Op{Code: types.OpDeref, Value: size})
	t.push(typ{})
	return nil
}

// derefType: DW_OP_deref_type loads a value of a base type.
func derefType(t *translator, p op) error {
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
	return nil
}

// constType: DW_OP_const_type pushes a constant of a base type, its bytes
// in the target's order.
func constType(t *translator, p op) error {
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
	return nil
}

// regvalType: DW_OP_regval_type pushes a register's value as a base type.
func regvalType(t *translator, p op) error {
	ty, err := t.baseType(p.u2)
	if err != nil {
		return err
	}
	t.emit(t.reg(p.u))
	t.normalize(ty)
	t.push(ty)
	return nil
}

// convert: DW_OP_convert and DW_OP_reinterpret give the value on top a
// base type; a reinterpretation keeps the size.
func convert(t *translator, p op) error {
	ty, err := t.baseType(p.u)
	if err != nil {
		return err
	}
	from, err := t.pop(1)
	if err != nil {
		return err
	}
	c := p.code
	if (c == opReinterpret || c == opGNUReinterpret) && from[0].size != ty.size && from[0].size != 0 && ty.size != 0 {
		return fmt.Errorf("a reinterpretation between sizes")
	}
	t.normalize(ty)
	t.push(ty)
	return nil
}

// plusUconst: DW_OP_plus_uconst adds its operand to the value on top.
func plusUconst(t *translator, p op) error {
	ty, err := t.pop(1)
	if err != nil {
		return err
	}
	t.emit(types.Op{Code: types.OpConst, Value: int64(p.u)}, types.Op{Code: types.OpPlus})
	t.normalize(ty[0])
	t.push(ty[0])
	return nil
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

// arith: the operations of binaryOps, on the two values on top; a
// comparison pushes a generic 0 or 1.
func arith(t *translator, p op) error {
	ts, err := t.pop(2)
	if err != nil {
		return err
	}
	ty, err := t.unify(ts, p.code == opShl)
	if err != nil {
		return err
	}
	code := binaryOps[p.code][0]
	if ty.size != 0 && !ty.signed {
		code = binaryOps[p.code][1]
	}
	t.emit(types.Op{Code: code})
	if p.code >= opEq && p.code <= opNe {
		t.push(typ{})
		return nil
	}
	t.normalize(ty)
	t.push(ty)
	return nil
}

// mod: DW_OP_mod, signed for a signed base type.
func mod(t *translator, _ op) error {
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
	return nil
}

// shift: DW_OP_shr (logical) and DW_OP_shra (arithmetic).
func shift(t *translator, p op) error {
	ts, err := t.pop(2)
	if err != nil {
		return err
	}
	ty := ts[0]
	if ty.size != 0 && ty.size < 8 && ty.signed != (p.code == opShra) {
		// A logical shift of a signed narrow value (or an arithmetic
		// one of an unsigned) sees the bits above the type's width:
		// rare enough not to be evaluated.
		return fmt.Errorf("a shift across the signedness of a %d-byte type", ty.size)
	}
	code := types.OpShr
	if p.code == opShra {
		code = types.OpShra
	}
	t.emit(types.Op{Code: code})
	t.normalize(ty)
	t.push(ty)
	return nil
}

// unaryOps by DWARF opcode.
var unaryOps = map[byte]types.OpCode{opNeg: types.OpNeg, opNot: types.OpNot, opAbs: types.OpAbs}

// unary: DW_OP_neg, DW_OP_not and DW_OP_abs, on the value on top.
func unary(t *translator, p op) error {
	ty, err := t.pop(1)
	if err != nil {
		return err
	}
	t.emit(types.Op{Code: unaryOps[p.code]})
	t.normalize(ty[0])
	t.push(ty[0])
	return nil
}

// copyEntry: DW_OP_dup, DW_OP_over and DW_OP_pick push a copy of the
// entry 0, 1 or N below the top.
func copyEntry(t *translator, p op) error {
	k := 0
	switch p.code {
	case opOver:
		k = 1
	case opPick:
		k = int(p.u)
	}
	if k >= len(t.stack) {
		return fmt.Errorf("no stack entry %d to copy", k)
	}
	ty := t.stack[len(t.stack)-1-k]
	switch p.code {
	case opDup:
		t.emit(types.Op{Code: types.OpDup})
	case opOver:
		t.emit(types.Op{Code: types.OpOver})
	default:
		t.emit(types.Op{Code: types.OpPick, Value: int64(k)})
	}
	t.push(ty)
	return nil
}

// drop: DW_OP_drop.
func drop(t *translator, _ op) error {
	if _, err := t.pop(1); err != nil {
		return err
	}
	t.emit(types.Op{Code: types.OpDrop})
	return nil
}

// swap: DW_OP_swap exchanges the two values on top.
func swap(t *translator, _ op) error {
	ts, err := t.pop(2)
	if err != nil {
		return err
	}
	t.emit(types.Op{Code: types.OpSwap})
	t.push(ts[1])
	t.push(ts[0])
	return nil
}

// rot: DW_OP_rot moves the top value below the next two.
func rot(t *translator, _ op) error {
	ts, err := t.pop(3)
	if err != nil {
		return err
	}
	t.emit(types.Op{Code: types.OpRot})
	t.push(ts[2])
	t.push(ts[0])
	t.push(ts[1])
	return nil
}

// skip: DW_OP_skip, forward only (translate sets its distance).
func skip(t *translator, p op) error {
	if p.s < 0 {
		return fmt.Errorf("a branch backwards")
	}
	t.emit(types.Op{Code: types.OpSkip})
	return nil
}

// bra: DW_OP_bra branches, forward only, when the value it pops is not 0.
func bra(t *translator, p op) error {
	if p.s < 0 {
		return fmt.Errorf("a branch backwards")
	}
	if _, err := t.pop(1); err != nil {
		return err
	}
	t.emit(types.Op{Code: types.OpBra})
	return nil
}

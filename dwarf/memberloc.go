package dwarf

import (
	"encoding/binary"

	"github.com/binscope/binscope/internal/leb128"
	"github.com/binscope/binscope/types"
)

// locValue is a value on the stack of a member location expression: an
// offset from the object's address (obj), a plain number, or a value read
// from memory at run time (mem).
type locValue struct {
	n   int64
	obj bool
	mem bool
}

// memberLocation evaluates a DW_AT_data_member_location expression, which
// starts with the address of the enclosing object on the stack (DWARF 5
// §2.5.1, §5.7.6) and leaves the member's address. The result is the
// member's offset when it does not depend on the object; DynamicRuntime when
// the expression reads memory (DW_OP_deref: a C++ virtual base's offset in
// the vtable); DynamicUnknown for an operation this evaluator does not know.
//
// Worked example: DW_OP_plus_uconst 12 leaves obj+12, offset 12. GCC's
// virtual base, 12 06 48 1c 06 22 (dup, deref, lit24, minus, deref, plus),
// reads the vtable pointer, then the offset 24 bytes before its target, and
// adds it to obj: DynamicRuntime. A lone constant (DWARF 2's DW_OP_constu N,
// which some producers write) is taken as the offset N.
func memberLocation(x []byte, order binary.ByteOrder) (int64, types.Dynamic) {
	m := memberEval{stack: []locValue{{obj: true}}}
	const maxOps = 64
	for ops := 0; len(x) > 0; ops++ {
		if ops > maxOps {
			return 0, types.DynamicUnknown
		}
		var ok bool
		if x, ok = m.step(x, order); !ok {
			return 0, types.DynamicUnknown
		}
	}
	top, ok := m.pop()
	switch {
	case !ok:
		return 0, types.DynamicUnknown
	case top.mem:
		return 0, types.DynamicRuntime
	}
	return top.n, types.DynamicNone
}

// memberEval is the stack of a member location expression's evaluation.
type memberEval struct {
	stack []locValue
}

func (m *memberEval) pop() (locValue, bool) {
	if len(m.stack) == 0 {
		return locValue{}, false
	}
	v := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	return v, true
}

// step applies the operation x starts with and returns the rest of x;
// false for an operation memberLocation does not know or a malformed one.
func (m *memberEval) step(x []byte, order binary.ByteOrder) ([]byte, bool) {
	op := x[0]
	x = x[1:]
	if v, rest, known, ok := constOp(op, x, order); known {
		if ok {
			m.stack = append(m.stack, v)
		}
		return rest, ok
	}
	var push locValue
	switch op {
	case 0x23: // DW_OP_plus_uconst
		u, n := leb128.Uint(x)
		if n <= 0 {
			return x, false
		}
		x = x[n:]
		a, ok := m.pop()
		if !ok {
			return x, false
		}
		a.n += int64(u)
		push = a
	case 0x12: // DW_OP_dup
		if len(m.stack) == 0 {
			return x, false
		}
		push = m.stack[len(m.stack)-1]
	case 0x96: // DW_OP_nop
		return x, true
	case 0x13: // DW_OP_drop
		_, ok := m.pop()
		return x, ok
	case 0x14: // DW_OP_over
		if len(m.stack) < 2 {
			return x, false
		}
		push = m.stack[len(m.stack)-2]
	case 0x16: // DW_OP_swap
		l := len(m.stack)
		if l < 2 {
			return x, false
		}
		m.stack[l-1], m.stack[l-2] = m.stack[l-2], m.stack[l-1]
		return x, true
	case 0x06: // DW_OP_deref
		if _, ok := m.pop(); !ok {
			return x, false
		}
		push = locValue{mem: true}
	case 0x22, 0x1c: // DW_OP_plus, DW_OP_minus
		b, ok1 := m.pop()
		a, ok2 := m.pop()
		if !ok1 || !ok2 {
			return x, false
		}
		var ok bool
		if push, ok = plusMinus(op, a, b); !ok {
			return x, false
		}
	default:
		return x, false
	}
	m.stack = append(m.stack, push)
	return x, true
}

// constOp reads a constant-pushing operation (DW_OP_lit*, DW_OP_const*):
// known is false for another operation, ok false for a malformed one.
func constOp(op byte, x []byte, order binary.ByteOrder) (v locValue, rest []byte, known, ok bool) {
	switch {
	case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
		return locValue{n: int64(op - 0x30)}, x, true, true
	case op >= 0x08 && op <= 0x0f: // DW_OP_const1u..const8s
		size := 1 << ((op - 0x08) / 2)
		if len(x) < size {
			return v, x, true, false
		}
		var u uint64
		switch size {
		case 1:
			u = uint64(x[0])
		case 2:
			u = uint64(order.Uint16(x))
		case 4:
			u = uint64(order.Uint32(x))
		case 8:
			u = order.Uint64(x)
		}
		if (op-0x08)%2 == 1 { // signed: sign-extend
			shift := 64 - 8*size
			u = uint64(int64(u<<shift) >> shift)
		}
		return locValue{n: int64(u)}, x[size:], true, true
	case op == 0x10: // DW_OP_constu
		u, n := leb128.Uint(x)
		if n <= 0 {
			return v, x, true, false
		}
		return locValue{n: int64(u)}, x[n:], true, true
	case op == 0x11: // DW_OP_consts
		s, n := leb128.Int(x)
		if n <= 0 {
			return v, x, true, false
		}
		return locValue{n: s}, x[n:], true, true
	}
	return v, x, false, false
}

// plusMinus is a + b (DW_OP_plus) or a - b (DW_OP_minus); false where
// the result is no offset from the object nor a number.
func plusMinus(op byte, a, b locValue) (locValue, bool) {
	switch {
	case a.mem || b.mem:
		return locValue{mem: true}, true
	case op == 0x22 && !(a.obj && b.obj):
		return locValue{n: a.n + b.n, obj: a.obj || b.obj}, true
	case op == 0x1c && !b.obj:
		return locValue{n: a.n - b.n, obj: a.obj}, true
	case op == 0x1c && a.obj && b.obj:
		return locValue{n: a.n - b.n}, true
	}
	return locValue{}, false
}

// order is the target's byte order, for constants in expressions.
func (c *converter) order() binary.ByteOrder {
	if c.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

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
	stack := []locValue{{obj: true}}
	pop := func() (locValue, bool) {
		if len(stack) == 0 {
			return locValue{}, false
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v, true
	}
	const maxOps = 64
	for ops := 0; len(x) > 0; ops++ {
		if ops > maxOps {
			return 0, types.DynamicUnknown
		}
		op := x[0]
		x = x[1:]
		var push locValue
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			push = locValue{n: int64(op - 0x30)}
		case op >= 0x08 && op <= 0x0f: // DW_OP_const1u..const8s
			size := 1 << ((op - 0x08) / 2)
			if len(x) < size {
				return 0, types.DynamicUnknown
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
			x = x[size:]
			push = locValue{n: int64(u)}
		case op == 0x10 || op == 0x23: // DW_OP_constu, DW_OP_plus_uconst
			u, n := leb128.Uint(x)
			if n <= 0 {
				return 0, types.DynamicUnknown
			}
			x = x[n:]
			if op == 0x10 {
				push = locValue{n: int64(u)}
				break
			}
			a, ok := pop()
			if !ok {
				return 0, types.DynamicUnknown
			}
			a.n += int64(u)
			push = a
		case op == 0x11: // DW_OP_consts
			s, n := leb128.Int(x)
			if n <= 0 {
				return 0, types.DynamicUnknown
			}
			x = x[n:]
			push = locValue{n: s}
		case op == 0x12: // DW_OP_dup
			if len(stack) == 0 {
				return 0, types.DynamicUnknown
			}
			push = stack[len(stack)-1]
		case op == 0x96: // DW_OP_nop
			continue
		case op == 0x13: // DW_OP_drop
			if _, ok := pop(); !ok {
				return 0, types.DynamicUnknown
			}
			continue
		case op == 0x14: // DW_OP_over
			if len(stack) < 2 {
				return 0, types.DynamicUnknown
			}
			push = stack[len(stack)-2]
		case op == 0x16: // DW_OP_swap
			if len(stack) < 2 {
				return 0, types.DynamicUnknown
			}
			l := len(stack)
			stack[l-1], stack[l-2] = stack[l-2], stack[l-1]
			continue
		case op == 0x06: // DW_OP_deref
			if _, ok := pop(); !ok {
				return 0, types.DynamicUnknown
			}
			push = locValue{mem: true}
		case op == 0x22 || op == 0x1c: // DW_OP_plus, DW_OP_minus
			b, ok1 := pop()
			a, ok2 := pop()
			if !ok1 || !ok2 {
				return 0, types.DynamicUnknown
			}
			switch {
			case a.mem || b.mem:
				push = locValue{mem: true}
			case op == 0x22 && !(a.obj && b.obj):
				push = locValue{n: a.n + b.n, obj: a.obj || b.obj}
			case op == 0x1c && !b.obj:
				push = locValue{n: a.n - b.n, obj: a.obj}
			case op == 0x1c && a.obj && b.obj:
				push = locValue{n: a.n - b.n}
			default:
				return 0, types.DynamicUnknown
			}
		default:
			return 0, types.DynamicUnknown
		}
		stack = append(stack, push)
	}
	top, ok := pop()
	switch {
	case !ok:
		return 0, types.DynamicUnknown
	case top.mem:
		return 0, types.DynamicRuntime
	}
	return top.n, types.DynamicNone
}

// order is the target's byte order, for constants in expressions.
func (c *converter) order() binary.ByteOrder {
	if c.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

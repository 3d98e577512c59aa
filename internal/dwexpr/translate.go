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

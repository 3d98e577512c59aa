package types

import (
	"fmt"
	"strings"
)

// OpCode is an operation of a location expression's stack machine (see
// Op). Values on the stack are 64 bits wide; operations on a narrower type
// are followed by an OpZext or OpSext that puts the result back in that
// type, so the machine needs no types of its own.
type OpCode uint8

const (
	OpReg   OpCode = iota + 1 // push register Reg's value
	OpEntry                   // push the value register Reg had at the function's entry (DW_OP_entry_value)
	OpCFA                     // push the canonical frame address (DW_OP_call_frame_cfa)
	OpAddr                    // push the static address Value, a virtual address of the file (relocated when loaded)
	OpConst                   // push Value
	OpParam                   // push the value the caller passed for the parameter whose DIE is at offset Value (DW_OP_GNU_parameter_ref)
	OpDeref                   // pop an address, push the Value bytes there (1 to 8), zero-extended
	OpPlus
	OpMinus
	OpMul
	OpDiv  // signed; a division by zero fails
	OpDivU // unsigned
	OpMod  // unsigned (DW_OP_mod of the generic type)
	OpModS // signed: the sign of the dividend
	OpAnd
	OpOr
	OpXor
	OpShl
	OpShr  // logical
	OpShra // arithmetic
	OpEq   // comparisons push 1 or 0
	OpNe
	OpLt // signed
	OpGt
	OpLe
	OpGe
	OpLtU // unsigned
	OpGtU
	OpLeU
	OpGeU
	OpNeg
	OpNot
	OpAbs
	OpZext // keep the low Value bytes, zero-extended
	OpSext // keep the low Value bytes, sign-extended
	OpDup
	OpDrop
	OpOver
	OpPick // push a copy of the entry Value below the top (0: the top)
	OpSwap
	OpRot  // the top three entries: a b c (c on top) become c a b
	OpSkip // go on Value operations further (forward only)
	OpBra  // pop; when not zero, go on Value operations further
	OpFail // the value cannot be computed: no caller matched
	numOps
)

var opNames = [...]string{"", "reg", "entry", "cfa", "addr", "const", "param", "deref",
	"plus", "minus", "mul", "div", "divu", "mod", "mods", "and", "or", "xor", "shl", "shr", "shra",
	"eq", "ne", "lt", "gt", "le", "ge", "ltu", "gtu", "leu", "geu",
	"neg", "not", "abs", "zext", "sext", "dup", "drop", "over", "pick", "swap", "rot", "skip", "bra", "fail"}

func (c OpCode) String() string {
	if c > 0 && c < numOps {
		return opNames[c]
	}
	return fmt.Sprintf("OpCode(%d)", uint8(c))
}

// MarshalText spells the operation as its name, for probe specs.
func (c OpCode) MarshalText() ([]byte, error) {
	if c == 0 || c >= numOps {
		return nil, fmt.Errorf("no operation %d", uint8(c))
	}
	return []byte(opNames[c]), nil
}

// UnmarshalText reads a name MarshalText wrote.
func (c *OpCode) UnmarshalText(b []byte) error {
	for i := OpCode(1); i < numOps; i++ {
		if opNames[i] == string(b) {
			*c = i
			return nil
		}
	}
	return fmt.Errorf("no operation %q", b)
}

// Op is one operation of a location expression: what a DWARF expression
// computes, decoded so that a probe can evaluate it (registers named,
// .debug_addr indexes and the frame base resolved, base types turned into
// extensions). Reg names a register as the architecture spells it; Value
// is the operand (a constant, a size, a count of operations).
//
// Worked example: GCC describes the parameter n of an expansion called
// with a caller's x*3+1, x in RDI, as DW_OP_breg5 0; DW_OP_lit3;
// DW_OP_mul; DW_OP_plus_uconst 1; DW_OP_stack_value, which decodes to the
// piece {Kind: LocValue, Ops: [reg RDI, const 3, mul, const 1, plus]}.
type Op struct {
	Code  OpCode `json:"op"`
	Reg   string `json:"reg,omitempty"`
	Value int64  `json:"value,omitempty"`
}

// pops and pushes are each operation's effect on the stack's depth.
func (o Op) effect() (pop, push int) {
	switch o.Code {
	case OpReg, OpEntry, OpCFA, OpAddr, OpConst, OpParam:
		return 0, 1
	case OpDeref, OpNeg, OpNot, OpAbs, OpZext, OpSext:
		return 1, 1
	case OpDup:
		return 1, 2
	case OpDrop, OpBra:
		return 1, 0
	case OpOver:
		return 2, 3
	case OpPick:
		return int(o.Value) + 1, int(o.Value) + 2
	case OpSwap:
		return 2, 2
	case OpRot:
		return 3, 3
	case OpSkip, OpFail:
		return 0, 0
	}
	return 2, 1 // the binary operations
}

// MaxExprDepth bounds the stack of an expression a probe evaluates.
const MaxExprDepth = 16

// CheckOps reports why ops cannot run as a stack machine a probe
// evaluates, or nil: every operation has its operands, the stack stays
// within MaxExprDepth, branches go forward to an operation (or the end)
// with the same depth on every path, and the end leaves a value.
func CheckOps(ops []Op) error {
	depth := make([]int, len(ops)+1)
	for i := range depth {
		depth[i] = -1
	}
	depth[0] = 0
	join := func(to, d int) error {
		switch {
		case to > len(ops):
			return fmt.Errorf("a branch past the end")
		case depth[to] >= 0 && depth[to] != d:
			return fmt.Errorf("paths join with different stack depths")
		}
		depth[to] = d
		return nil
	}
	for i, o := range ops {
		d := depth[i]
		if d < 0 {
			continue // after a skip or a fail, reached by no branch
		}
		if o.Code == 0 || o.Code >= numOps {
			return fmt.Errorf("operation %d: unknown", i)
		}
		pop, push := o.effect()
		if o.Code == OpPick && (o.Value < 0 || o.Value >= MaxExprDepth) {
			return fmt.Errorf("pick %d", o.Value)
		}
		if o.Code == OpDeref && (o.Value < 1 || o.Value > 8) || (o.Code == OpZext || o.Code == OpSext) && (o.Value < 1 || o.Value > 8) {
			return fmt.Errorf("%s of %d bytes", o.Code, o.Value)
		}
		if d < pop {
			return fmt.Errorf("operation %d (%s): the stack holds %d values, it needs %d", i, o.Code, d, pop)
		}
		d += push - pop
		if d > MaxExprDepth {
			return fmt.Errorf("more than %d values on the stack", MaxExprDepth)
		}
		switch o.Code {
		case OpSkip, OpBra:
			if o.Value < 0 {
				return fmt.Errorf("a branch backwards")
			}
			if err := join(i+1+int(o.Value), d); err != nil {
				return err
			}
			if o.Code == OpSkip {
				continue
			}
		case OpFail:
			continue
		}
		if err := join(i+1, d); err != nil {
			return err
		}
	}
	if depth[len(ops)] < 1 {
		return fmt.Errorf("the expression leaves no value")
	}
	return nil
}

// leaf spells the operations that push a value of their own.
func leaf(o Op) (string, bool) {
	switch o.Code {
	case OpReg:
		return o.Reg, true
	case OpEntry:
		return "entry(" + o.Reg + ")", true
	case OpCFA:
		return "CFA", true
	case OpAddr:
		return fmt.Sprintf("%#x", uint64(o.Value)), true
	case OpConst:
		return fmt.Sprint(o.Value), true
	case OpParam:
		return fmt.Sprintf("param(%#x)", o.Value), true
	}
	return "", false
}

// OpsString spells ops as an expression: "(RDI*3)+1", "[[RSP+8]+16]",
// "entry(RSI)", "u32(RDI)"; postfix ("RDI 3 mul ...") when they branch.
func OpsString(ops []Op) string {
	postfix := func() string {
		var ss []string
		for _, o := range ops {
			s, ok := leaf(o)
			if !ok {
				s = o.Code.String()
				if o.Value != 0 {
					s += fmt.Sprint(o.Value)
				}
			}
			ss = append(ss, s)
		}
		return strings.Join(ss, " ")
	}
	// Each entry's spelling, and whether it is an operation's result
	// that needs parentheses as an operand.
	type entry struct {
		s        string
		compound bool
	}
	var st []entry
	pop := func() entry {
		e := st[len(st)-1]
		st = st[:len(st)-1]
		return e
	}
	operand := func(e entry) string {
		if e.compound {
			return "(" + e.s + ")"
		}
		return e.s
	}
	push := func(s string) { st = append(st, entry{s: s}) }
	infix := map[OpCode]string{OpPlus: "+", OpMinus: "-", OpMul: "*", OpDiv: "/", OpDivU: "/u", OpMod: "%", OpModS: "%s",
		OpAnd: "&", OpOr: "|", OpXor: "^", OpShl: "<<", OpShr: ">>", OpShra: ">>a", OpEq: "==", OpNe: "!=",
		OpLt: "<", OpGt: ">", OpLe: "<=", OpGe: ">=", OpLtU: "<u", OpGtU: ">u", OpLeU: "<=u", OpGeU: ">=u"}
	for _, o := range ops {
		pops, _ := o.effect()
		if len(st) < pops {
			return postfix()
		}
		if s, ok := leaf(o); ok {
			push(s)
			continue
		}
		switch o.Code {
		case OpDeref:
			s := "[" + pop().s + "]"
			if o.Value != 8 {
				s = fmt.Sprintf("u%d%s", 8*o.Value, s)
			}
			push(s)
		case OpNeg:
			push("-" + operand(pop()))
		case OpNot:
			push("~" + operand(pop()))
		case OpAbs:
			push("abs(" + pop().s + ")")
		case OpZext:
			push(fmt.Sprintf("u%d(%s)", 8*o.Value, pop().s))
		case OpSext:
			push(fmt.Sprintf("s%d(%s)", 8*o.Value, pop().s))
		case OpDup:
			st = append(st, st[len(st)-1])
		case OpDrop:
			pop()
		case OpOver:
			st = append(st, st[len(st)-2])
		case OpPick:
			st = append(st, st[len(st)-1-int(o.Value)])
		case OpSwap:
			n := len(st)
			st[n-1], st[n-2] = st[n-2], st[n-1]
		case OpRot:
			n := len(st)
			st[n-1], st[n-2], st[n-3] = st[n-2], st[n-3], st[n-1]
		case OpSkip, OpBra, OpFail:
			return postfix()
		default:
			b, a := pop(), pop()
			s := operand(a) + infix[o.Code] + operand(b)
			if o.Code == OpPlus && !b.compound && strings.HasPrefix(b.s, "-") {
				s = operand(a) + b.s // x+-68 is x-68
			}
			st = append(st, entry{s: s, compound: true})
		}
	}
	if len(st) != 1 {
		return postfix()
	}
	return st[0].s
}

package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/unwind"
)

// Stack slots of a filter: each operand's value (a number, or for a text
// operand whether it equals its literal) from filterTop down, in the
// unwinder's slots (the filter runs before any unwinding); the text
// read for a comparison at the stack's bottom; the postfix code's stack
// where an expression's is (see exprSlot: no expression runs then).
const (
	filterTop      = -72
	filterOperands = (filterTop - unwind.SlotsEnd) / 8
	filterText     = -512 // 8 bytes of length, then spec.StringMax of text
)

func operandSlot(k int) int16 { return int16(filterTop - 8*(k+1)) }

// filterInsns evaluates the site's filter and returns 0 from the program
// when it is false or cannot be evaluated (an operand unavailable here or
// whose read faults, a division by zero). R6 is the context; R8 (the ok
// bits) is 0 after it; R9 holds the values captured at the entry when
// the filter reads them. Without a filter it is empty.
func filterInsns(a *arch.Arch, i int, site spec.Site, key, label string) (asm.Instructions, error) {
	f := site.Filter
	if f == nil {
		return nil, nil
	}
	if len(f.Operands) > filterOperands || len(f.Operands) > 32 {
		return nil, fmt.Errorf("filter %s: %d operands, at most %d", f.Text, len(f.Operands), filterOperands)
	}
	reject := label + "_reject"
	in := asm.Instructions{asm.Mov.Imm(rOK, 0)}
	if usesCaptures(spec.Site{Args: f.Operands}) {
		k, err := captured(a, key, i)
		if err != nil {
			return nil, err
		}
		in = append(in, k...)
	}
	texts := map[int]string{}
	for _, op := range f.Code {
		if op.Op == "streq" {
			texts[op.Arg] = op.Text
		}
	}
	for k, o := range f.Operands {
		if o.Unavailable != "" {
			continue // its ok bit stays 0: the filter rejects
		}
		text, isText := texts[k]
		off := operandSlot(k)
		if isText {
			off = filterText
		}
		in = append(in, bpfasm.StoreImm64(asm.RFP, off, 0))
		code, err := fetchProgram(a, o, site.Addr, asm.RFP, off, fmt.Sprintf("%s_o%d", label, k), k, false)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %s: %w", f.Text, o.Name, err)
		}
		in = append(in, code...)
		if isText {
			in = append(in, textEquals(o, text, operandSlot(k), fmt.Sprintf("%s_t%d", label, k))...)
		}
	}
	all := int32(1)<<len(f.Operands) - 1
	in = append(in, asm.Mov.Reg(asm.R1, rOK), asm.And.Imm(asm.R1, all), asm.JNE.Imm(asm.R1, all, reject))
	code, err := postfix(f, label, reject)
	if err != nil {
		return nil, err
	}
	in = append(in, code...)
	pass := label + "_pass"
	return append(in,
		asm.LoadMem(asm.R1, asm.RFP, exprSlot(0), asm.DWord),
		asm.JNE.Imm(asm.R1, 0, pass),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(reject),
		asm.Return(),
		asm.Mov.Imm(rOK, 0).WithSymbol(pass),
	), nil
}

// textEquals stores at slot 1 when the text operand o, read at
// filterText, is text, else 0: a Go string of that length; a C string
// whose NUL follows it (read with its NUL: a longer one reads more); a
// char array or $comm holding it, then a NUL unless it fills the array.
func textEquals(o spec.Fetch, text string, slot int16, label string) asm.Instructions {
	no := label + "_no"
	done := label + "_done"
	n := int64(len(text))
	in := asm.Instructions{asm.LoadMem(asm.R1, asm.RFP, filterText, asm.DWord)}
	switch o.Type {
	case "string":
		in = append(in, asm.JNE.Imm(asm.R1, int32(n), no))
	case "cstring":
		in = append(in, asm.JNE.Imm(asm.R1, int32(n+1), no))
		n++ // the NUL too
	default: // chars: R1 is the bytes read
		if n > o.Size {
			return asm.Instructions{bpfasm.StoreImm64(asm.RFP, slot, 0)}
		}
		if n < o.Size {
			n++
		}
	}
	for k := int64(0); k < n; k++ {
		c := byte(0)
		if k < int64(len(text)) {
			c = text[k]
		}
		in = append(in,
			asm.LoadMem(asm.R1, asm.RFP, int16(filterText+8+k), asm.Byte),
			asm.JNE.Imm(asm.R1, int32(c), no),
		)
	}
	return append(in,
		bpfasm.StoreImm64(asm.RFP, slot, 1),
		asm.Ja.Label(done),
		bpfasm.StoreImm64(asm.RFP, slot, 0).WithSymbol(no),
		asm.Mov.Reg(asm.R1, asm.R1).WithSymbol(done),
	)
}

// postfix compiles the filter's code: each entry of its stack has its
// own slot (exprSlot), its signedness known while compiling.
func postfix(f *spec.Filter, label, reject string) (asm.Instructions, error) {
	var in asm.Instructions
	var signed []bool
	load := func(r asm.Register, d int) asm.Instruction { return asm.LoadMem(r, asm.RFP, exprSlot(d), asm.DWord) }
	store := func(d int, r asm.Register) asm.Instruction { return asm.StoreMem(asm.RFP, exprSlot(d), r, asm.DWord) }
	for n, op := range f.Code {
		d := len(signed)
		lbl := fmt.Sprintf("%s_c%d", label, n)
		switch op.Op {
		case "num":
			in = append(in, asm.LoadImm(asm.R1, op.Value, asm.DWord), store(d, asm.R1))
			signed = append(signed, true)
			continue
		case "arg", "streq":
			if op.Arg < 0 || op.Arg >= len(f.Operands) {
				return nil, fmt.Errorf("filter %s: no operand %d", f.Text, op.Arg)
			}
			in = append(in, asm.LoadMem(asm.R1, asm.RFP, operandSlot(op.Arg), asm.DWord))
			s := true
			if op.Op == "arg" {
				o := f.Operands[op.Arg]
				in = append(in, normalize(o)...)
				s = o.Type != "" && o.Type[0] == 's'
			}
			in = append(in, store(d, asm.R1))
			signed = append(signed, s)
			continue
		}
		if d < 1 {
			return nil, fmt.Errorf("filter %s: %s without an operand", f.Text, op.Op)
		}
		if unary, ok := filterUnary(op.Op, lbl); ok {
			in = append(in, load(asm.R1, d-1))
			in = append(in, unary...)
			in = append(in, store(d-1, asm.R1))
			if op.Op == "!" {
				signed[d-1] = true
			}
			continue
		}
		if d < 2 {
			return nil, fmt.Errorf("filter %s: %s needs two operands", f.Text, op.Op)
		}
		ls, rs := signed[d-2], signed[d-1]
		code, resultSigned, err := filterBinary(op.Op, ls, rs, lbl, reject)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", f.Text, err)
		}
		in = append(in, load(asm.R1, d-2), load(asm.R2, d-1))
		in = append(in, code...)
		in = append(in, store(d-2, asm.R1))
		signed = append(signed[:d-2], resultSigned)
	}
	if len(signed) != 1 {
		return nil, fmt.Errorf("filter %s: %d values left, want 1", f.Text, len(signed))
	}
	return in, nil
}

// normalize widens an operand's value in R1 from its size by its sign,
// or extracts its bitfield.
func normalize(o spec.Fetch) asm.Instructions {
	right := asm.RSh
	if o.Type != "" && o.Type[0] == 's' {
		right = asm.ArSh
	}
	if b := o.Bits; b != nil && b.Size > 0 && b.Size < 64 && b.Offset >= 0 && b.Offset+b.Size <= 64 {
		// Move the field to the top bits, then back down with its sign.
		return asm.Instructions{
			asm.LSh.Imm(asm.R1, int32(64-b.Offset-b.Size)),
			right.Imm(asm.R1, int32(64-b.Size)),
		}
	}
	return widenR1(o.Size, o.Type != "" && o.Type[0] == 's')
}

// filterUnary is -v, ^v or !v on R1.
func filterUnary(op, lbl string) (asm.Instructions, bool) {
	switch op {
	case "neg":
		return asm.Instructions{asm.Mov.Imm(asm.R2, 0), asm.Sub.Reg(asm.R2, asm.R1), asm.Mov.Reg(asm.R1, asm.R2)}, true
	case "~":
		return asm.Instructions{asm.Xor.Imm(asm.R1, -1)}, true
	case "!":
		return asm.Instructions{
			asm.Mov.Imm(asm.R2, 1),
			asm.JEq.Imm(asm.R1, 0, lbl),
			asm.Mov.Imm(asm.R2, 0),
			asm.Mov.Reg(asm.R1, asm.R2).WithSymbol(lbl),
		}, true
	}
	return nil, false
}

// filterBinary leaves R1 op R2 in R1: unsigned when either side is, as C's
// 64-bit arithmetic; a shift right is arithmetic when its left side is
// signed; a division by zero rejects.
func filterBinary(op string, ls, rs bool, lbl, reject string) (asm.Instructions, bool, error) {
	signed := ls && rs
	alu := map[string]asm.ALUOp{"+": asm.Add, "-": asm.Sub, "*": asm.Mul, "&": asm.And, "|": asm.Or, "^": asm.Xor, "<<": asm.LSh}
	if a, ok := alu[op]; ok {
		if op == "<<" {
			signed = ls
		}
		return asm.Instructions{a.Reg(asm.R1, asm.R2)}, signed, nil
	}
	switch op {
	case ">>":
		if ls {
			return asm.Instructions{asm.ArSh.Reg(asm.R1, asm.R2)}, true, nil
		}
		return asm.Instructions{asm.RSh.Reg(asm.R1, asm.R2)}, false, nil
	case "/", "%":
		a := map[string]asm.ALUOp{"/": asm.Div, "%": asm.Mod}[op]
		if signed {
			a = map[string]asm.ALUOp{"/": asm.SDiv, "%": asm.SMod}[op]
		}
		return asm.Instructions{asm.JEq.Imm(asm.R2, 0, reject), a.Reg(asm.R1, asm.R2)}, signed, nil
	case "&&", "||":
		in := asm.Instructions{
			asm.Mov.Imm(asm.R3, 0),
			asm.JEq.Imm(asm.R1, 0, lbl+"_l"),
			asm.Mov.Imm(asm.R3, 1),
			asm.Mov.Imm(asm.R4, 0).WithSymbol(lbl + "_l"),
			asm.JEq.Imm(asm.R2, 0, lbl+"_r"),
			asm.Mov.Imm(asm.R4, 1),
			asm.Mov.Reg(asm.R1, asm.R3).WithSymbol(lbl + "_r"),
		}
		if op == "&&" {
			return append(in, asm.And.Reg(asm.R1, asm.R4)), true, nil
		}
		return append(in, asm.Or.Reg(asm.R1, asm.R4)), true, nil
	}
	jumps := map[string][2]asm.JumpOp{
		"==": {asm.JEq, asm.JEq}, "!=": {asm.JNE, asm.JNE},
		"<": {asm.JLT, asm.JSLT}, "<=": {asm.JLE, asm.JSLE}, ">": {asm.JGT, asm.JSGT}, ">=": {asm.JGE, asm.JSGE},
	}
	j, ok := jumps[op]
	if !ok {
		return nil, false, fmt.Errorf("unknown operator %q", op)
	}
	jump := j[0]
	if signed {
		jump = j[1]
	}
	return asm.Instructions{
		asm.Mov.Imm(asm.R3, 1),
		jump.Reg(asm.R1, asm.R2, lbl),
		asm.Mov.Imm(asm.R3, 0),
		asm.Mov.Reg(asm.R1, asm.R3).WithSymbol(lbl),
	}, true, nil
}

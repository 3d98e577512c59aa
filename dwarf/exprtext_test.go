package dwarf

import (
	"regexp"
	"strconv"
	"strings"
)

// A stack entry of the text evaluator: a value and its DWARF type (size 8
// and signed for the generic type, as gdb takes it).
type tval struct {
	v      uint64
	size   int64
	signed bool
	typed  bool
}

func (t tval) norm() tval {
	if t.size < 8 {
		sh := uint(64 - 8*t.size)
		if t.signed {
			t.v = uint64(int64(t.v<<sh) >> sh)
		} else {
			t.v = t.v << sh >> sh
		}
	}
	return t
}

// baseTypes are the base types llvm-dwarfdump names in DW_OP_convert:
// size and signedness.
var baseTypes = map[string]struct {
	size   int64
	signed bool
}{
	"char": {1, true}, "signed char": {1, true}, "unsigned char": {1, false}, "_Bool": {1, false},
	"short int": {2, true}, "short unsigned int": {2, false}, "int": {4, true}, "unsigned int": {4, false},
	"long int": {8, true}, "long unsigned int": {8, false}, "long long int": {8, true}, "long long unsigned int": {8, false},
}

// gpr are the registers both decoders name alike.
var gpr = map[string]bool{"RAX": true, "RDX": true, "RCX": true, "RBX": true, "RSI": true, "RDI": true, "RBP": true,
	"RSP": true, "R8": true, "R9": true, "R10": true, "R11": true, "R12": true, "R13": true, "R14": true, "R15": true}

var ateType = regexp.MustCompile(`^DW_ATE_(signed|unsigned)_(8|16|32|64)$`)

// splitOps splits llvm-dwarfdump's spelling of an expression at the commas
// outside parentheses and quotes.
func splitOps(text string) []string {
	var out []string
	depth, quote, start := 0, false, 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"':
			quote = !quote
		case quote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(text[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(text[start:]))
}

// evalText evaluates an expression as llvm-dwarfdump prints it, piece by
// piece: a second decoder and evaluator of DWARF, written from the
// standard, against which the package's are checked. ok is false for an
// operation it does not evaluate (branches, TLS, vector types).
func (m *machine) evalText(text, frameBase string) (pieces []result, ok bool) {
	var st []tval
	pop := func() tval {
		if len(st) == 0 {
			ok = false
			return tval{size: 8, signed: true}
		}
		v := st[len(st)-1]
		st = st[:len(st)-1]
		return v
	}
	push := func(v uint64) { st = append(st, tval{v: v, size: 8, signed: true}) }
	num := func(s string) (uint64, bool) {
		s = strings.TrimPrefix(s, "+")
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			return uint64(v), true
		}
		v, err := strconv.ParseUint(s, 0, 64)
		return v, err == nil
	}
	regOff := func(s string) (string, uint64, bool) { // "RDI+0", "RSP-8"
		i := strings.LastIndexAny(s, "+-")
		if i <= 0 {
			return "", 0, false
		}
		off, err := strconv.ParseInt(s[i:], 10, 64)
		return s[:i], uint64(off), err == nil
	}
	ok = true
	var cur *result // a register or implicit location
	value := false  // DW_OP_stack_value seen
	empty := true   // no operation in this piece yet
	piece := func(size int64) {
		switch {
		case cur != nil:
			cur.size = size
			pieces = append(pieces, *cur)
		case empty:
			pieces = append(pieces, result{size: size, v: ^uint64(0), addr: true}) // optimised out
		default:
			top := pop()
			pieces = append(pieces, result{addr: !value, v: top.v, size: size})
		}
		st, cur, value, empty = nil, nil, false, true
	}
	for _, tok := range splitOps(text) {
		if !ok {
			return nil, false
		}
		name, arg, _ := strings.Cut(tok, " ")
		name = strings.TrimRight(name, "0123456789")
		if strings.HasPrefix(tok, "DW_OP_lit") {
			v, _ := strconv.Atoi(strings.TrimPrefix(tok, "DW_OP_lit"))
			push(uint64(v))
			empty = false
			continue
		}
		empty = false
		bin := func(f func(a, b tval) (uint64, bool)) {
			b, a := pop(), pop()
			t := a
			if a.typed != b.typed { // a generic constant with a typed value: the value's type
				if b.typed {
					t = b
				}
				a.size, a.signed, b.size, b.signed = t.size, t.signed, t.size, t.signed
				a, b = a.norm(), b.norm()
			}
			v, good := f(a, b)
			ok = ok && good
			t.v = v
			st = append(st, t.norm())
		}
		switch name {
		case "DW_OP_reg", "DW_OP_regx":
			ok = ok && gpr[arg]
			cur = &result{v: m.reg(arg)}
		case "DW_OP_breg", "DW_OP_bregx":
			r, off, good := regOff(arg)
			ok = ok && good && gpr[r]
			push(m.reg(r) + off)
		case "DW_OP_fbreg":
			off, good := num(arg)
			ok = ok && good
			switch frameBase {
			case "DW_OP_call_frame_cfa":
				push(m.cfa + off)
			case "DW_OP_reg7 RSP", "DW_OP_reg6 RBP":
				push(m.reg(frameBase[len(frameBase)-3:]) + off)
			default:
				ok = false
			}
		case "DW_OP_call_frame_cfa":
			push(m.cfa)
		case "DW_OP_const1u", "DW_OP_const2u", "DW_OP_const4u", "DW_OP_const8u", "DW_OP_constu", "DW_OP_const1s",
			"DW_OP_const2s", "DW_OP_const4s", "DW_OP_const8s", "DW_OP_consts", "DW_OP_addr":
			v, good := num(arg)
			ok = ok && good
			push(v)
		case "DW_OP_plus_uconst":
			v, good := num(arg)
			ok = ok && good
			a := pop()
			a.v += v
			st = append(st, a.norm())
		case "DW_OP_deref", "DW_OP_deref_size":
			size := int64(8)
			if arg != "" {
				v, good := num(arg)
				ok = ok && good
				size = int64(v)
			}
			push(m.mem(pop().v, size))
		case "DW_OP_entry_value(DW_OP_reg", "DW_OP_GNU_entry_value(DW_OP_reg":
			if !strings.HasSuffix(arg, ")") {
				return nil, false
			}
			push(m.entryReg(strings.TrimSuffix(arg, ")")))
		case "DW_OP_convert":
			a := pop()
			if arg == "0x0" {
				a.size, a.signed, a.typed = 8, true, false
				st = append(st, a)
				break
			}
			_, tn, _ := strings.Cut(arg, " ")
			tn = strings.Trim(tn, `"`)
			bt, known := baseTypes[tn]
			if m := ateType.FindStringSubmatch(tn); m != nil {
				n, _ := strconv.Atoi(m[2])
				bt.size, bt.signed, known = int64(n/8), m[1] == "signed", true
			}
			if !known {
				return nil, false
			}
			a.size, a.signed, a.typed = bt.size, bt.signed, true
			st = append(st, a.norm())
		case "DW_OP_dup":
			a := pop()
			st = append(st, a, a)
		case "DW_OP_drop":
			pop()
		case "DW_OP_over":
			if len(st) < 2 {
				return nil, false
			}
			st = append(st, st[len(st)-2])
		case "DW_OP_pick":
			k, good := num(arg)
			if !good || int(k) >= len(st) {
				return nil, false
			}
			st = append(st, st[len(st)-1-int(k)])
		case "DW_OP_swap":
			b, a := pop(), pop()
			st = append(st, b, a)
		case "DW_OP_rot":
			c, b, a := pop(), pop(), pop()
			st = append(st, c, a, b)
		case "DW_OP_neg", "DW_OP_not", "DW_OP_abs":
			a := pop()
			switch name {
			case "DW_OP_neg":
				a.v = -a.v
			case "DW_OP_not":
				a.v = ^a.v
			default:
				if int64(a.v) < 0 && a.signed {
					a.v = -a.v
				}
			}
			st = append(st, a.norm())
		case "DW_OP_plus", "DW_OP_minus", "DW_OP_mul", "DW_OP_and", "DW_OP_or", "DW_OP_xor":
			bin(func(a, b tval) (uint64, bool) {
				return map[string]uint64{"DW_OP_plus": a.v + b.v, "DW_OP_minus": a.v - b.v, "DW_OP_mul": a.v * b.v,
					"DW_OP_and": a.v & b.v, "DW_OP_or": a.v | b.v, "DW_OP_xor": a.v ^ b.v}[name], true
			})
		case "DW_OP_div", "DW_OP_mod":
			bin(func(a, b tval) (uint64, bool) {
				if b.v == 0 {
					return 0, false
				}
				unsigned := !a.signed || name == "DW_OP_mod" && !a.typed
				switch {
				case name == "DW_OP_div" && unsigned:
					return a.v / b.v, true
				case name == "DW_OP_div":
					return uint64(int64(a.v) / int64(b.v)), true
				case unsigned:
					return a.v % b.v, true
				}
				return uint64(int64(a.v) % int64(b.v)), true
			})
		case "DW_OP_shl", "DW_OP_shr", "DW_OP_shra":
			b, a := pop(), pop()
			switch {
			case name == "DW_OP_shl":
				a.v = shift(a.v, b.v, func(x uint64, n uint) uint64 { return x << n }, 0)
			case name == "DW_OP_shr":
				w := a.v
				if a.size < 8 {
					w = w << (64 - 8*a.size) >> (64 - 8*a.size)
				}
				a.v = shift(w, b.v, func(x uint64, n uint) uint64 { return x >> n }, 0)
			default:
				fill := uint64(0)
				if int64(a.v) < 0 {
					fill = ^uint64(0)
				}
				a.v = shift(a.v, b.v, func(x uint64, n uint) uint64 { return uint64(int64(x) >> n) }, fill)
			}
			st = append(st, a.norm())
		case "DW_OP_eq", "DW_OP_ne", "DW_OP_lt", "DW_OP_gt", "DW_OP_le", "DW_OP_ge":
			bin(func(a, b tval) (uint64, bool) {
				x, y := int64(a.v), int64(b.v)
				lt, eq := x < y, x == y
				if a.typed && !a.signed {
					lt = a.v < b.v
				}
				r := map[string]bool{"DW_OP_eq": eq, "DW_OP_ne": !eq, "DW_OP_lt": lt, "DW_OP_gt": !lt && !eq,
					"DW_OP_le": lt || eq, "DW_OP_ge": !lt}[name]
				if r {
					return 1, true
				}
				return 0, true
			})
			st[len(st)-1].size, st[len(st)-1].signed, st[len(st)-1].typed = 8, true, false
		case "DW_OP_stack_value":
			value = true
		case "DW_OP_implicit_value":
			f := strings.Fields(arg)
			if len(f) < 2 || len(f) > 9 {
				return nil, false
			}
			var v uint64
			for i := len(f) - 1; i >= 1; i-- {
				b, err := strconv.ParseUint(f[i], 0, 8)
				if err != nil {
					return nil, false
				}
				v = v<<8 | b
			}
			cur = &result{v: v}
		case "DW_OP_piece":
			size, good := num(arg)
			ok = ok && good
			piece(int64(size))
		default:
			return nil, false
		}
	}
	if !empty || len(pieces) == 0 {
		piece(0)
	}
	return pieces, ok
}

// shift is a DWARF shift: by any count, everything shifted out past 63.
func shift(v, n uint64, f func(uint64, uint) uint64, fill uint64) uint64 {
	if n >= 64 {
		return fill
	}
	return f(v, uint(n))
}

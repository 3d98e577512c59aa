package usdt

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"
)

// ArgKind is the form of an operand.
type ArgKind uint8

const (
	ArgReg   ArgKind = iota + 1 // a register's low Size bytes: 8@%rax, -4@%eax
	ArgMem                      // Size bytes in memory: -4@-20(%rbp), 8@16(%rax,%rbx,8), 8@sym+8(%rip)
	ArgConst                    // a constant: -4@$5
)

// Arg is one operand of a probe: where its value is when the probe's nop
// runs, and how wide and signed the value is (SystemTap's N@OPERAND, N
// the size in bytes, negative when the value is signed).
//
// Worked example: "-4@-20(%rbp)" is {Kind: ArgMem, Size: 4, Signed: true,
// Reg: "RBP", Offset: -20}: the int 20 bytes below the frame pointer.
type Arg struct {
	Text   string
	Size   int // bytes: 1, 2, 4 or 8
	Signed bool
	Kind   ArgKind
	// Reg is the register (ArgReg) or the base register (ArgMem; "" for
	// none), by the architecture's 64-bit name (RAX for %eax, %ax, %al);
	// Index and Scale add Index's value times Scale to the address.
	Reg, Index string
	Scale      int64
	// Offset is the displacement (ArgMem), added to Symbol's address
	// when the operand names one (8@counter+8(%rip)).
	Offset int64
	Symbol string
	Const  int64 // ArgConst
	// Unreadable, when set, says why the operand cannot be read (a high
	// byte register, an architecture whose operands are not read yet);
	// Kind is then 0.
	Unreadable string
}

// Type is the value's fetch type: s8..s64 when signed, else u8..u64.
func (a Arg) Type() string {
	if a.Signed {
		return fmt.Sprintf("s%d", a.Size*8)
	}
	return fmt.Sprintf("u%d", a.Size*8)
}

// x86Regs maps the x86-64 register names an operand may use, at any
// width, to the 64-bit register; "" for the high bytes (%ah), which a
// value of pt_regs cannot hold alone.
var x86Regs = func() map[string]string {
	m := map[string]string{"rip": "RIP", "ah": "", "bh": "", "ch": "", "dh": ""}
	for _, r := range []struct{ q, d, w, b string }{
		{"rax", "eax", "ax", "al"}, {"rbx", "ebx", "bx", "bl"}, {"rcx", "ecx", "cx", "cl"}, {"rdx", "edx", "dx", "dl"},
		{"rsi", "esi", "si", "sil"}, {"rdi", "edi", "di", "dil"}, {"rbp", "ebp", "bp", "bpl"}, {"rsp", "esp", "sp", "spl"},
	} {
		for _, n := range []string{r.q, r.d, r.w, r.b} {
			m[n] = strings.ToUpper(r.q)
		}
	}
	for i := 8; i <= 15; i++ {
		q := fmt.Sprintf("r%d", i)
		for _, n := range []string{q, q + "d", q + "w", q + "b", q + "l"} {
			m[n] = strings.ToUpper(q)
		}
	}
	return m
}()

// ParseArg reads one operand as sys/sdt.h writes it for machine m: a size
// (1, 2, 4 or 8 bytes, negative for a signed value; 8 when absent), '@',
// then the operand in the assembler's syntax. An operand it cannot read
// comes back with Unreadable set, not as an error: the probe's other
// arguments stay readable.
func ParseArg(s string, m elf.Machine) Arg {
	a := Arg{Text: s, Size: 8}
	op := s
	if i := strings.IndexByte(s, '@'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return unreadable(a, "the size %q is not a number", s[:i])
		}
		if n < 0 {
			a.Signed, n = true, -n
		}
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return unreadable(a, "a size of %d bytes", n)
		}
		a.Size, op = n, s[i+1:]
	}
	if m != elf.EM_X86_64 {
		return unreadable(a, "operands of %v are not read yet (x86-64 only)", m)
	}
	switch {
	case strings.HasPrefix(op, "%"):
		r, why := x86Reg(op)
		if why != "" {
			return unreadable(a, "%s", why)
		}
		a.Kind, a.Reg = ArgReg, r
	case strings.HasPrefix(op, "$"):
		v, err := parseInt(op[1:])
		if err != nil {
			return unreadable(a, "the constant %q is not a number", op[1:])
		}
		a.Kind, a.Const = ArgConst, v
	default:
		return x86Mem(a, op)
	}
	return a
}

func unreadable(a Arg, format string, args ...any) Arg {
	a.Kind = 0
	a.Unreadable = fmt.Sprintf("operand %q: ", a.Text) + fmt.Sprintf(format, args...)
	return a
}

// x86Reg is the 64-bit register of an operand's %name.
func x86Reg(op string) (string, string) {
	r, ok := x86Regs[strings.TrimPrefix(op, "%")]
	switch {
	case !ok:
		return "", fmt.Sprintf("%s is not a general register", op)
	case r == "":
		return "", fmt.Sprintf("%s is a high byte register", op)
	}
	return r, ""
}

// x86Mem reads DISP(BASE,INDEX,SCALE), DISP a number or SYMBOL[+-N].
func x86Mem(a Arg, op string) Arg {
	open := strings.IndexByte(op, '(')
	if open < 0 || !strings.HasSuffix(op, ")") {
		return unreadable(a, "not a register, a constant or a memory operand")
	}
	disp, inner := op[:open], strings.Split(op[open+1:len(op)-1], ",")
	a.Kind, a.Scale = ArgMem, 1
	if disp != "" {
		if v, err := parseInt(disp); err == nil {
			a.Offset = v
		} else {
			sym, off := disp, int64(0)
			if i := strings.LastIndexAny(disp, "+-"); i > 0 {
				v, err := parseInt(disp[i:])
				if err != nil {
					return unreadable(a, "the displacement %q is not SYMBOL+N", disp)
				}
				sym, off = disp[:i], v
			}
			a.Symbol, a.Offset = sym, off
		}
	}
	if len(inner) > 3 {
		return unreadable(a, "too many parts in %q", op)
	}
	if b := strings.TrimSpace(inner[0]); b != "" {
		r, why := x86Reg(b)
		if why != "" {
			return unreadable(a, "%s", why)
		}
		a.Reg = r
	}
	if len(inner) > 1 {
		r, why := x86Reg(strings.TrimSpace(inner[1]))
		if why != "" {
			return unreadable(a, "%s", why)
		}
		a.Index = r
		if len(inner) == 3 {
			sc, err := parseInt(strings.TrimSpace(inner[2]))
			if err != nil || sc != 1 && sc != 2 && sc != 4 && sc != 8 {
				return unreadable(a, "the scale %q is not 1, 2, 4 or 8", inner[2])
			}
			a.Scale = sc
		}
	}
	if a.Symbol != "" && a.Reg != "RIP" || a.Reg == "RIP" && a.Index != "" {
		return unreadable(a, "a symbol's address is read only relative to %%rip")
	}
	return a
}

// parseInt reads a decimal or 0x hexadecimal number with an optional sign.
func parseInt(s string) (int64, error) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

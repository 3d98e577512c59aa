package codegen

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
)

// bpfcBuiltins are the numeric builtins a filter reads, as libbpf's
// helpers give them ($comm is text: see filterText).
var bpfcBuiltins = map[string]string{
	"pid": "bpf_get_current_pid_tgid() >> 32", "tid": "(__u32)bpf_get_current_pid_tgid()",
	"uid": "(__u32)bpf_get_current_uid_gid()", "gid": "bpf_get_current_uid_gid() >> 32",
	"cpu": "bpf_get_smp_processor_id()", "ts": "bpf_ktime_get_ns()",
}

// writeFilter writes a site's filter as C statements that return 0 from
// the program when it is false or cannot be evaluated, as goprobe's own
// programs do (spec.Filter): each operand read as the fetch reads it
// (widened by its type's sign; a faulting last read rejects), text
// compared byte by byte within spec.StringMax, then the postfix code as
// one variable per step, __s64 or __u64 by C's rules for 64-bit
// operands; a division by zero rejects. why says what it cannot write.
func (r bpfc) writeFilter(b *strings.Builder, f *spec.Filter) (why string) {
	texts := map[int]string{}
	for _, op := range f.Code {
		if op.Op == "streq" {
			texts[op.Arg] = op.Text
		}
	}
	var body strings.Builder
	fmt.Fprintf(&body, "\t/* filter: %s */\n", strings.ReplaceAll(f.Text, "*/", "* /"))
	for k, o := range f.Operands {
		if why := r.filterOperand(&body, k, o, texts); why != "" {
			return o.Name + ": " + why
		}
	}
	if why := filterCode(&body, f); why != "" {
		return why
	}
	b.WriteString(body.String())
	return ""
}

// filterOperand writes operand k's value as f<k>: a number, or for a
// text operand 1 when it is its literal, else 0.
func (r bpfc) filterOperand(b *strings.Builder, k int, o spec.Fetch, texts map[int]string) string {
	if o.Unavailable != "" {
		return o.Unavailable
	}
	if captured(o) {
		return "read through a value kept from the entry, which goprobe trace keeps and this generator does not"
	}
	if len(o.Chains) == 0 || o.Chains[0].Field != nil {
		return "not read from registers or memory, which this generator cannot spell"
	}
	c := o.Chains[0]
	if text, ok := texts[k]; ok {
		return r.filterText(b, k, o, text)
	}
	if o.Type == "" || strings.ContainsRune("fc", rune(o.Type[0])) || o.Size < 1 || o.Size > 8 {
		return fmt.Sprintf("a %s value, which this generator cannot compare", o.Type)
	}
	signed := o.Type[0] == 's'
	fmt.Fprintf(b, "\t__u64 f%d = 0;\n", k)
	if c.Builtin != "" {
		v, ok := bpfcBuiltins[c.Builtin]
		if !ok {
			return "the builtin $" + c.Builtin + ", which this generator cannot spell as a number"
		}
		fmt.Fprintf(b, "\tf%d = %s;\n", k, v)
		return ""
	}
	if why := computed(o); why != "" {
		return why
	}
	base, last, deref := r.chainC(c)
	if !deref {
		fmt.Fprintf(b, "\tf%d = %s;\n", k, castC(base, o.Size, signed))
		return ""
	}
	fmt.Fprintf(b, "\tif (bpf_probe_read_user(&f%d, %d, (const void *)(%s + %d)))\n\t\treturn 0;\n", k, o.Size, base, last)
	fmt.Fprintf(b, "\tf%d = %s;\n", k, castC(fmt.Sprintf("f%d", k), o.Size, signed))
	return ""
}

// filterText writes f<k> = 1 when the text operand o is text: a Go
// string of that length; a C string whose NUL follows it; a char array
// or $comm holding it, then a NUL unless it fills the array.
func (r bpfc) filterText(b *strings.Builder, k int, o spec.Fetch, text string) string {
	c := o.Chains[0]
	n := int64(len(text))
	fmt.Fprintf(b, "\tunsigned char t%d[%d] = {};\n\t__u64 f%d = 0, n%d = 0;\n", k, spec.StringMax, k, k)
	switch {
	case c.Builtin == "comm":
		fmt.Fprintf(b, "\tbpf_get_current_comm(t%d, 16);\n\tn%d = 16;\n", k, k)
		o.Size = 16
	case c.Builtin != "":
		return "the builtin $" + c.Builtin + ", which this generator cannot spell as text"
	case computed(o) != "":
		return computed(o)
	case o.Type == "string" && len(o.Chains) == 2 && o.Chains[1].Builtin == "":
		var p, l strings.Builder
		r.valueC(&p, "__u64 p", c, 8, false)
		r.valueC(&l, fmt.Sprintf("n%d", k), o.Chains[1], 8, false)
		fmt.Fprintf(b, "\t{\n%s\t\t{\n%s\t\t}\n", p.String(), strings.ReplaceAll(l.String(), "\t\t", "\t\t\t"))
		fmt.Fprintf(b, "\t\tif (n%d == %d && bpf_probe_read_user(t%d, %d, (const void *)p))\n\t\t\treturn 0;\n\t}\n", k, n, k, n)
	case o.Type == "cstring":
		var p strings.Builder
		r.valueC(&p, "__u64 p", c, 8, false)
		fmt.Fprintf(b, "\t{\n%s\t\tlong got = bpf_probe_read_user_str(t%d, %d, (const void *)p);\n\t\tif (got < 0)\n\t\t\treturn 0;\n\t\tn%d = got;\n\t}\n", p.String(), k, spec.StringMax, k)
		n++ // the NUL too
	case o.Type == "chars":
		base, last, deref := r.chainC(c)
		if deref {
			base = fmt.Sprintf("%s + %d", base, last)
		}
		m := min(o.Size, spec.StringMax)
		fmt.Fprintf(b, "\tif (bpf_probe_read_user(t%d, %d, (const void *)(%s)))\n\t\treturn 0;\n\tn%d = %d;\n", k, m, base, k, m)
	default:
		return fmt.Sprintf("a %s compared with text, which this generator cannot spell", o.Type)
	}
	var test []string
	switch o.Type {
	case "string", "cstring":
		test = append(test, fmt.Sprintf("n%d == %d", k, n))
	default:
		if n > o.Size {
			fmt.Fprintf(b, "\t/* \"%s\" is longer than the %d bytes */\n", escapeString(text), o.Size)
			return ""
		}
		if n < o.Size {
			n++
		}
	}
	for i := int64(0); i < n; i++ {
		ch := byte(0)
		if i < int64(len(text)) {
			ch = text[i]
		}
		test = append(test, fmt.Sprintf("t%d[%d] == %d", k, i, ch))
	}
	fmt.Fprintf(b, "\tf%d = %s;\n", k, strings.Join(test, " && "))
	return ""
}

// filterCode writes the postfix code as variables e<n>, one per step,
// and returns 0 when the last is 0.
func filterCode(b *strings.Builder, f *spec.Filter) string {
	var stack []string
	var signed []bool
	for n, op := range f.Code {
		v := fmt.Sprintf("e%d", n)
		typ := func(s bool) string {
			if s {
				return "__s64"
			}
			return "__u64"
		}
		switch op.Op {
		case "num":
			fmt.Fprintf(b, "\t__s64 %s = (__s64)%#xULL;\n", v, uint64(op.Value))
			stack, signed = append(stack, v), append(signed, true)
			continue
		case "arg", "streq":
			if op.Arg < 0 || op.Arg >= len(f.Operands) {
				return fmt.Sprintf("no operand %d", op.Arg)
			}
			o := f.Operands[op.Arg]
			s := op.Op == "streq" || o.Type != "" && o.Type[0] == 's'
			fmt.Fprintf(b, "\t%s %s = (%s)f%d;\n", typ(s), v, typ(s), op.Arg)
			stack, signed = append(stack, v), append(signed, s)
			continue
		}
		d := len(stack)
		switch op.Op {
		case "neg", "~", "!":
			if d < 1 {
				return "a malformed filter"
			}
			a, s := stack[d-1], signed[d-1]
			switch op.Op {
			case "neg":
				fmt.Fprintf(b, "\t%s %s = (%s)(0 - (__u64)%s);\n", typ(s), v, typ(s), a)
			case "~":
				fmt.Fprintf(b, "\t%s %s = (%s)~(__u64)%s;\n", typ(s), v, typ(s), a)
			default:
				fmt.Fprintf(b, "\t__s64 %s = %s == 0;\n", v, a)
				s = true
			}
			stack[d-1], signed[d-1] = v, s
			continue
		}
		if d < 2 {
			return "a malformed filter"
		}
		l, rr, ls, rs := stack[d-2], stack[d-1], signed[d-2], signed[d-1]
		s, expr := ls && rs, ""
		switch op.Op {
		case "+", "-", "*", "&", "|", "^":
			expr = fmt.Sprintf("(__u64)%s %s (__u64)%s", l, op.Op, rr)
		case "<<":
			s, expr = ls, fmt.Sprintf("(__u64)%s << (%s & 63)", l, rr)
		case ">>":
			s, expr = ls, fmt.Sprintf("%s >> (%s & 63)", l, rr)
		case "/", "%":
			fmt.Fprintf(b, "\tif (%s == 0)\n\t\treturn 0;\n", rr)
			expr = fmt.Sprintf("(__u64)%s %s (__u64)%s", l, op.Op, rr)
			if s { // by magnitudes: clang -target bpf before v4 has no signed division
				ml, mr := fmt.Sprintf("(%s < 0 ? 0 - (__u64)%s : (__u64)%s)", l, l, l), fmt.Sprintf("(%s < 0 ? 0 - (__u64)%s : (__u64)%s)", rr, rr, rr)
				sign := fmt.Sprintf("(%s < 0) != (%s < 0)", l, rr)
				if op.Op == "%" {
					sign = l + " < 0" // a remainder has the dividend's sign
				}
				expr = fmt.Sprintf("(%s) ? 0 - %s %s %s : %s %s %s", sign, ml, op.Op, mr, ml, op.Op, mr)
			}
		case "==", "!=", "<", "<=", ">", ">=":
			if !s {
				l, rr = "(__u64)"+l, "(__u64)"+rr
			}
			s, expr = true, fmt.Sprintf("%s %s %s", l, op.Op, rr)
		case "&&", "||":
			s, expr = true, fmt.Sprintf("(%s != 0) %s (%s != 0)", l, op.Op, rr)
		default:
			return fmt.Sprintf("the operator %q", op.Op)
		}
		fmt.Fprintf(b, "\t%s %s = (%s)(%s);\n", typ(s), v, typ(s), expr)
		stack, signed = append(stack[:d-2], v), append(signed[:d-2], s)
	}
	if len(stack) != 1 {
		return "a malformed filter"
	}
	fmt.Fprintf(b, "\tif (!%s)\n\t\treturn 0;\n", stack[0])
	return ""
}

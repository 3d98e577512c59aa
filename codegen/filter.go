package codegen

import (
	"fmt"
	"strconv"

	"github.com/binscope/binscope/spec"
)

// bpftraceBuiltins are goprobe's builtins as bpftrace spells them.
var bpftraceBuiltins = map[string]string{
	"pid": "pid", "tid": "tid", "uid": "uid", "gid": "gid", "cpu": "cpu", "ts": "nsecs", "comm": "comm",
}

// builtinArg spells a builtin fetch for bpftrace, or ok false.
func builtinArg(a spec.Fetch) (format, value string, ok bool) {
	if len(a.Chains) != 1 || a.Chains[0].Builtin == "" {
		return "", "", false
	}
	v, known := bpftraceBuiltins[a.Chains[0].Builtin]
	if !known {
		return "", "", false
	}
	switch {
	case a.Type == "chars":
		return "\\\"%s\\\"", v, true
	case a.Type[0] == 's':
		return "%ld", v, true
	case a.Type[0] == 'u':
		return "%lu", v, true
	}
	return "0x%lx", v, true
}

// bpftraceFilter spells a site's filter as a bpftrace predicate: its
// postfix code back in infix, each operation parenthesized, operands as
// bpftraceArg reads them; why says what it cannot spell. bpftrace 0.17
// divides, takes remainders and shifts right as if unsigned whatever the
// operands' types (a run against a program's own record of its calls
// showed it), so a signed /, % or >> is not spelled: C's result, which
// goprobe's own programs give, would differ for a negative operand.
func (r regs) bpftraceFilter(f *spec.Filter) (pred, why string) {
	var stack []string
	var signed []bool
	operand := func(k int) (string, string) {
		if k < 0 || k >= len(f.Operands) {
			return "", fmt.Sprintf("no operand %d", k)
		}
		o := f.Operands[k]
		if o.Unavailable != "" {
			return "", o.Name + ": " + o.Unavailable
		}
		if _, v, ok := builtinArg(o); ok {
			return v, ""
		}
		if why := computed(o); why != "" {
			return "", o.Name + ": " + why
		}
		_, v := r.bpftraceArg(o)
		return v, ""
	}
	for _, op := range f.Code {
		switch op.Op {
		case "num":
			stack = append(stack, strconv.FormatInt(op.Value, 10))
			signed = append(signed, true)
			continue
		case "arg", "streq":
			v, why := operand(op.Arg)
			if why != "" {
				return "", why
			}
			s := true
			if op.Op == "streq" {
				v = fmt.Sprintf("%s == \"%s\"", v, escapeString(op.Text))
			} else if t := f.Operands[op.Arg].Type; t == "" || t[0] != 's' {
				s = false
			}
			stack = append(stack, "("+v+")")
			signed = append(signed, s)
			continue
		}
		n := len(stack)
		switch op.Op {
		case "neg", "~", "!":
			if n < 1 {
				return "", "a malformed filter"
			}
			sym := map[string]string{"neg": "-", "~": "~", "!": "!"}[op.Op]
			stack[n-1] = "(" + sym + stack[n-1] + ")"
			signed[n-1] = signed[n-1] || op.Op == "!"
		default:
			if n < 2 {
				return "", "a malformed filter"
			}
			s := signed[n-2] && signed[n-1]
			switch op.Op {
			case "/", "%", ">>":
				if s || op.Op == ">>" && signed[n-2] {
					return "", fmt.Sprintf("a signed %s, which bpftrace 0.17 computes as unsigned", op.Op)
				}
			case "<<":
				s = signed[n-2]
			case "==", "!=", "<", "<=", ">", ">=", "&&", "||":
				s = true
			}
			stack = append(stack[:n-2], "("+stack[n-2]+" "+op.Op+" "+stack[n-1]+")")
			signed = append(signed[:n-2], s)
		}
	}
	if len(stack) != 1 {
		return "", "a malformed filter"
	}
	return stack[0], ""
}

// filterChains are the fetch chains of a filter's operands.
func filterChains(f *spec.Filter) []spec.Chain {
	var out []spec.Chain
	for _, o := range f.Operands {
		out = append(out, o.Chains...)
	}
	return out
}

package codegen

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/spec"
)

// perfFilter spells a site's filter as an ftrace event filter (perf
// record/stat --filter) over fetch arguments it adds, goprobe_f<k>: a
// fetched argument compared with a number in its type's range (ftrace
// compares by the argument's type, as C does then), a C string or char
// array == "text" (no glob characters), joined by &&, || and !. why
// names the first part it cannot express.
func (r regs) perfFilter(f *spec.Filter) (filter string, args []string, why string) {
	type item struct {
		arg  int    // an operand, or -1
		num  int64  // a number, when arg is -1 and pred is ""
		pred string // a predicate
	}
	var stack []item
	fetched := map[int]bool{}
	fetch := func(k int, typ string) string {
		o := f.Operands[k]
		if !fetched[k] {
			fetched[k] = true
			at := r.perfChain(o.Chains[0])
			if o.Type == "cstring" { // :string reads the text at the address given
				at = "+0(" + at + ")"
			}
			args = append(args, fmt.Sprintf("goprobe_f%d=%s:%s", k, at, typ))
		}
		return fmt.Sprintf("goprobe_f%d", k)
	}
	cannot := func(part string) (string, []string, string) {
		return "", nil, part + ", which perf's event filter cannot express (it compares a fetched argument with a number or a C string with text)"
	}
	for _, op := range f.Code {
		switch op.Op {
		case "num":
			stack = append(stack, item{arg: -1, num: op.Value})
			continue
		case "arg", "streq":
			if op.Arg < 0 || op.Arg >= len(f.Operands) {
				return "", nil, "a malformed filter"
			}
			o := f.Operands[op.Arg]
			if w := perfUnread(o); w != "" {
				return "", nil, o.Name + ": " + w
			}
			if op.Op == "arg" {
				if t := fetchType(o); t == "" || !strings.ContainsRune("sux", rune(t[0])) {
					return cannot(o.Name + " of type " + o.Type)
				}
				stack = append(stack, item{arg: op.Arg})
				continue
			}
			if o.Type != "cstring" && o.Type != "chars" || strings.ContainsAny(op.Text, "*?[]\"\\'") {
				return cannot(fmt.Sprintf("%s == %q", o.Name, op.Text))
			}
			stack = append(stack, item{arg: -1, pred: fmt.Sprintf("%s == \"%s\"", fetch(op.Arg, "string"), op.Text)})
			continue
		}
		n := len(stack)
		if op.Op == "neg" && n >= 1 && stack[n-1].arg < 0 && stack[n-1].pred == "" {
			stack[n-1].num = -stack[n-1].num // a negative number
			continue
		}
		if op.Op == "!" && n >= 1 && stack[n-1].pred != "" {
			stack[n-1].pred = "!(" + stack[n-1].pred + ")"
			continue
		}
		if n < 2 {
			return cannot("the operator " + op.Op)
		}
		a, b := stack[n-2], stack[n-1]
		var p string
		switch op.Op {
		case "&&", "||":
			if a.pred == "" || b.pred == "" {
				return cannot("the operator " + op.Op + " on a value")
			}
			p = "(" + a.pred + ") " + op.Op + " (" + b.pred + ")"
		case "==", "!=", "<", "<=", ">", ">=":
			flip := map[string]string{"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
			o := op.Op
			if a.arg < 0 && a.pred == "" && b.arg >= 0 {
				a, b, o = b, a, flip[o]
			}
			if a.arg < 0 || b.arg >= 0 || b.pred != "" {
				return cannot("a comparison of two values")
			}
			t := fetchType(f.Operands[a.arg])
			bits := int64(0)
			fmt.Sscanf(t[1:], "%d", &bits)
			if bits < 8 || bits > 64 || !inRange(b.num, t[0] == 's', bits) {
				return cannot(fmt.Sprintf("%s compared with %d", f.Operands[a.arg].Name, b.num))
			}
			p = fmt.Sprintf("%s %s %d", fetch(a.arg, t), o, b.num)
		default:
			return cannot("the operator " + op.Op)
		}
		stack = append(stack[:n-2], item{arg: -1, pred: p})
	}
	if len(stack) != 1 || stack[0].pred == "" {
		return cannot("a value used as a condition")
	}
	return stack[0].pred, args, ""
}

// inRange reports whether v is a value of a bits-wide type, signed or
// not: compared with it, C and ftrace agree.
func inRange(v int64, signed bool, bits int64) bool {
	if signed {
		return bits == 64 || v >= -(1<<(bits-1)) && v < 1<<(bits-1)
	}
	return v >= 0 && (bits == 64 || v < 1<<bits)
}

// perfUnread says why perf probe cannot fetch a filter's operand, or "".
func perfUnread(o spec.Fetch) string {
	switch {
	case o.Unavailable != "":
		return o.Unavailable
	case captured(o):
		return "read through a value kept from the entry, which perf probe cannot do"
	case computed(o) != "":
		return computed(o)
	case len(o.Chains) == 0 || o.Chains[0].Field != nil:
		return "not read from registers or memory"
	}
	return ""
}

// perfSiteFilter is the site's --filter: the guard's, when it has one,
// and the site's filter, with the fetch arguments that filter adds.
func (r regs) perfSiteFilter(site spec.Site, guard string) (filter string, args []string, why string) {
	if site.Filter == nil {
		return guard, nil, ""
	}
	fl, args, why := r.perfFilter(site.Filter)
	if why != "" || guard == "" {
		return fl, args, why
	}
	return "(" + guard + ") && (" + fl + ")", args, ""
}

package probe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/binscope/binscope/spec"
)

// Filter is a definition's predicate, parsed: bpftrace's /PRED/ after the
// probe point ('hit /x > 3 && $pid == 1234/ x') or --filter. Its grammar
// is C's expressions, as bpftrace's predicates:
//
//	EXPR := EXPR OP EXPR | ! EXPR | - EXPR | ~ EXPR | ( EXPR ) | NUMBER | OPERAND
//	      | OPERAND == "TEXT" | OPERAND != "TEXT"
//	OP   := || && | ^ & == != < <= > >= << >> + - * / %   (lowest to highest)
//
// OPERAND is an argument as a definition writes one (x, it->name,
// a.b[2], $retval, $tid, %rdi, arg1, with an optional :TYPE); NUMBER is
// decimal or 0x hex. Text is compared with a C char * or char[N], a Go
// string or $comm.
type Filter struct {
	Text     string
	Operands []Arg
	Code     []spec.FilterOp
}

// ParseFilter parses a predicate (see Filter).
func ParseFilter(text string) (*Filter, error) {
	p := &filterParser{f: &Filter{Text: strings.TrimSpace(text)}}
	if err := p.lex(text); err != nil {
		return nil, fmt.Errorf("%w: filter %q: %v", ErrBadDef, text, err)
	}
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("%w: filter %q is empty", ErrBadDef, text)
	}
	if err := p.expr(0); err != nil {
		return nil, fmt.Errorf("%w: filter %q: %v", ErrBadDef, text, err)
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("%w: filter %q: unexpected %q", ErrBadDef, text, p.toks[p.pos].text)
	}
	return p.f, nil
}

// And is the filter that holds when both f and g do (nil: the other).
func (f *Filter) And(g *Filter) *Filter {
	switch {
	case f == nil:
		return g
	case g == nil:
		return f
	}
	out := &Filter{Text: "(" + f.Text + ") && (" + g.Text + ")"}
	out.Operands = append(append(out.Operands, f.Operands...), g.Operands...)
	out.Code = append(out.Code, f.Code...)
	for _, op := range g.Code {
		if op.Op == "arg" || op.Op == "streq" {
			op.Arg += len(f.Operands)
		}
		out.Code = append(out.Code, op)
	}
	out.Code = append(out.Code, spec.FilterOp{Op: "&&"})
	return out
}

type tokKind int

const (
	tokNum tokKind = iota
	tokText
	tokOperand
	tokOp
)

type token struct {
	kind tokKind
	text string
	num  int64
}

type filterParser struct {
	f    *Filter
	toks []token
	pos  int
}

// binary operators by precedence, lowest first.
var precedence = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

var operators = []string{"||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "|", "^", "&", "<", ">", "+", "-", "*", "/", "%", "!", "~", "(", ")"}

func (p *filterParser) lex(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			n, err := strconv.ParseUint(s[i:j], 0, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", s[i:j])
			}
			p.toks = append(p.toks, token{kind: tokNum, text: s[i:j], num: int64(n)})
			i = j
		case c == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(s[j])
					}
					continue
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return fmt.Errorf("unclosed text %s", s[i:])
			}
			if b.Len() > spec.FilterTextMax {
				return fmt.Errorf("text of %d bytes: at most %d", b.Len(), spec.FilterTextMax)
			}
			p.toks = append(p.toks, token{kind: tokText, text: b.String()})
			i = j + 1
		case isIdentByte(c) || (c == '$' || c == '%') && i+1 < len(s) && isIdentByte(s[i+1]):
			j := operandEnd(s, i)
			p.toks = append(p.toks, token{kind: tokOperand, text: s[i:j]})
			i = j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return fmt.Errorf("unexpected %q", s[i:i+1])
			}
			p.toks = append(p.toks, token{kind: tokOp, text: op})
			i += len(op)
		}
	}
	return nil
}

// operandEnd is where the operand that starts at s[i] ends: a name,
// then ->field, .field and [N] steps, then an optional :TYPE.
func operandEnd(s string, i int) int {
	j := i + 1
	ident := func() {
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
	}
	ident()
	for j < len(s) {
		switch {
		case strings.HasPrefix(s[j:], "->") && j+2 < len(s) && isIdentByte(s[j+2]):
			j += 2
			ident()
		case s[j] == '.' && j+1 < len(s) && isIdentByte(s[j+1]):
			j++
			ident()
		case s[j] == '[':
			k := strings.IndexByte(s[j:], ']')
			if k < 0 {
				return len(s)
			}
			j += k + 1
		default:
			if s[j] == ':' {
				k := j + 1
				for k < len(s) && isIdentByte(s[k]) {
					k++
				}
				if ArgTypes[s[j+1:k]] {
					return k
				}
			}
			return j
		}
	}
	return j
}

func (p *filterParser) peek() *token {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

func (p *filterParser) emit(op spec.FilterOp) { p.f.Code = append(p.f.Code, op) }

// expr parses operators of precedence level and above.
func (p *filterParser) expr(level int) error {
	if level == len(precedence) {
		return p.unary()
	}
	if err := p.expr(level + 1); err != nil {
		return err
	}
	for {
		t := p.peek()
		if t == nil || t.kind != tokOp || !slices.Contains(precedence[level], t.text) {
			return nil
		}
		p.pos++
		if err := p.expr(level + 1); err != nil {
			return err
		}
		p.emit(spec.FilterOp{Op: t.text})
	}
}

func (p *filterParser) unary() error {
	t := p.peek()
	if t == nil {
		return fmt.Errorf("an expression is missing at the end")
	}
	p.pos++
	switch {
	case t.kind == tokOp && (t.text == "!" || t.text == "-" || t.text == "~"):
		if err := p.unary(); err != nil {
			return err
		}
		op := t.text
		if op == "-" {
			op = "neg"
		}
		p.emit(spec.FilterOp{Op: op})
		return nil
	case t.kind == tokOp && t.text == "(":
		if err := p.expr(0); err != nil {
			return err
		}
		if c := p.peek(); c == nil || c.text != ")" {
			return fmt.Errorf("( without )")
		}
		p.pos++
		return nil
	case t.kind == tokNum:
		p.emit(spec.FilterOp{Op: "num", Value: t.num})
		return nil
	case t.kind == tokOperand:
		return p.operand(t.text)
	case t.kind == tokText:
		return fmt.Errorf("text %q compares with an operand: OPERAND == \"TEXT\"", t.text)
	}
	return fmt.Errorf("unexpected %q", t.text)
}

// operand adds an operand, compared with text when == or != and text
// follow.
func (p *filterParser) operand(text string) error {
	a, err := parseArg(text)
	if err != nil {
		return fmt.Errorf("operand %q: %v", text, err)
	}
	if a.Base == "$params" {
		return fmt.Errorf("$params is every parameter: name one")
	}
	k := len(p.f.Operands)
	p.f.Operands = append(p.f.Operands, a)
	if p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tokText && (p.toks[p.pos].text == "==" || p.toks[p.pos].text == "!=") {
		eq := p.toks[p.pos].text
		p.emit(spec.FilterOp{Op: "streq", Arg: k, Text: p.toks[p.pos+1].text})
		if eq == "!=" {
			p.emit(spec.FilterOp{Op: "!"})
		}
		p.pos += 2
		return nil
	}
	p.emit(spec.FilterOp{Op: "arg", Arg: k})
	return nil
}

// resolveFiltered is Resolve for a definition with a filter: its
// operands are read at each site as arguments are, after the
// definition's own, and become the site's Filter.
func (r *Resolver) resolveFiltered(d *Def) (*spec.Probe, error) {
	if d.Filter == nil {
		return r.Resolve(d)
	}
	e := *d
	e.Args = append([]Arg(nil), d.Args...)
	n := len(d.Filter.Operands)
	for k, a := range d.Filter.Operands {
		a.Name = fmt.Sprintf("?%d", k)
		e.Args = append(e.Args, a)
	}
	p, err := r.Resolve(&e)
	if err != nil {
		return nil, err
	}
	for i := range p.Sites {
		s := &p.Sites[i]
		if s.Kind == spec.SiteCapture || s.Kind == spec.SiteClear {
			continue
		}
		if len(s.Args) < n {
			return nil, fmt.Errorf("%s: the filter's operands are not read at %#x", d.Text, s.Addr)
		}
		ops := append([]spec.Fetch(nil), s.Args[len(s.Args)-n:]...)
		for k := range ops {
			if err := filterOperand(d, &ops[k], k); err != nil {
				return nil, err
			}
		}
		s.Args = s.Args[:len(s.Args)-n]
		s.Filter = &spec.Filter{Text: d.Filter.Text, Operands: ops, Code: d.Filter.Code}
	}
	return p, nil
}

// filterOperand checks that operand k of d's filter, resolved as an
// argument, reads one value the filter can use (see checkOperand).
func filterOperand(d *Def, f *spec.Fetch, k int) error {
	if f.Name != fmt.Sprintf("?%d", k) || f.Part != nil {
		return fmt.Errorf("%s: filter operand %s reads several values (a struct, several results): name one", d.Text, d.Filter.Operands[k].Expr)
	}
	return checkOperand(d.Text, d.Filter, f, k)
}

// checkOperand checks that operand k of flt reads a value the filter can
// use as it does: a number, or text it compares with a literal.
func checkOperand(def string, flt *Filter, f *spec.Fetch, k int) error {
	a := flt.Operands[k]
	f.Name = a.Expr
	text := false
	for _, op := range flt.Code {
		text = text || op.Op == "streq" && op.Arg == k
	}
	switch {
	case f.Unavailable != "":
		return nil // the filter rejects the site's hits; reported with the others
	case text && f.Type != "string" && f.Type != "cstring" && f.Type != "chars":
		return fmt.Errorf("%s: filter operand %s is %s, not text: it compares with numbers", def, a.Expr, f.Type)
	case !text && (f.Type == "string" || f.Type == "cstring" || f.Type == "chars"):
		return fmt.Errorf("%s: filter operand %s is text: compare it with \"TEXT\" (== or !=), or read its address (%s:u64)", def, a.Expr, a.Expr)
	case !text && (f.Type == "f32" || f.Type == "f64"):
		return fmt.Errorf("%s: filter operand %s is a float, which BPF cannot compare: read its bits (:u64)", def, a.Expr)
	case !text && (f.Type == "bytes" || f.Type == "iface" || f.Type == "struct"):
		return fmt.Errorf("%s: filter operand %s is not a number (%s): name a field", def, a.Expr, f.Type)
	}
	return nil
}

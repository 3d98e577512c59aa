// Package probe turns probe definitions into sites: the addresses where a
// uprobe must go so that a definition fires once per call (the out-of-line
// copy, every inline expansion, every full compiler clone; every RET for a
// return probe) and, at each, the fetch programs that read its arguments
// from registers and memory (package spec's Spec, which bpfprog compiles to
// BPF and codegen to bpf-c, bpftrace and perf probe). Instructions are
// decoded (x86asm) to find returns, instruction boundaries, Go's stack
// check and the control flow that places inline sites.
//
// A Resolver is made of parts, each holding only what it reads:
//
//   - target (target.go): the opened binary, per file: its image, its
//     DWARF, the model of its code read as definitions need it (all), the
//     symbols it reads by, and the DWARF lookups (varsAt, params, global).
//     Its methods also find functions by name and pattern (names.go:
//     quick, lookup, expandFuncs) and place Go's results (goabi.go).
//   - image (target.go): the ELF file, its path and architecture; its
//     methods decode instructions (insn.go) and find Go's stack check
//     (stackcheck.go).
//   - usdtNotes (usdt.go): the file's USDT probes and the symbols that place
//     them.
//   - frameTable (cfa.go): the call frame information: how the CFA is
//     computed at an address (cfa, mark), where a register is saved
//     (saved), frame slots as memory off a register (inFrame).
//   - flowIndex (flowindex.go): what placement reads of the code, each part
//     once: the control flow of each instance of a function (of, at), the
//     instance holding an address or an inline expansion (instanceAt,
//     hostOf), an instance's line rows, and which units GCC compiled.
//   - codeFacts (facts.go): what instructions compute, from the flow and
//     the file's bytes alone: known bits of a register (knownbits.go),
//     constants a store writes (copyconst.go).
//   - slotStores (slots.go): which stores reach a stack slot, from the
//     frame table and the control flow (slot.go, stale.go).
//   - copyConsts (copyconst.go): the constants copy sites of one
//     expansion print, checked against the stores of its code.
//   - valueChecks (checks.go): whether the place the debug info gives for
//     a value at a site holds it there (stale.go, evalcheck.go,
//     salvage.go, slot.go, aliasslot.go, bitsonly.go), from the target's
//     variables, the frame table, the control flow, codeFacts and
//     slotStores.
//   - entryValues (callsite.go): a value the function had at its entry,
//     in the register that kept it or from the callers' call sites, read
//     through the frames between (lower.go asks it for entry values and
//     removed parameters).
//   - inlinePlacer (place.go): where the calls of an inline expansion
//     start, from the control flow, stores (anchor.go), Go's marks
//     (starts.go) and per-thread marks (mark.go); which expansions are no
//     call of their own (piece.go).
//   - lowering (lower.go): a location's piece as operations at a pc: the
//     CFA, entry values (from entryValues), a spilled value's load
//     (spill.go), a vector register's general-register copy (veccopy.go).
//
// Resolver holds these parts and the last mark group it gave; its
// methods are the analyses that need several of them: sites (site.go),
// fetch programs (fetch.go) and the choice among an inline expansion's
// starts by what is readable there (join.go, later.go). The site a fetch
// program is built for is a value, siteAt, passed explicitly (fetch.go).
package probe

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/binscope/binscope/usdt"
)

// ErrBadDef is wrapped by errors about a probe definition's syntax.
var ErrBadDef = errors.New("bad probe definition")

// Def is a parsed probe definition:
//
//	PROBE := FUNC[%return] | FUNC:LINE | FILE:LINE | FUNC+OFFSET | [BIN:]0xADDR | usdt:[PROVIDER:]NAME
//	ARG   := [NAME=]EXPR[:TYPE]
//	EXPR  := param | local | $params | $retval | %REG, then ->field, .field, [N]
//	       | $pid | $tid | $comm | $cpu | $ts | $uid | $gid (see builtins)
//
// A USDT probe's arguments are arg0, arg1... (bpftrace's names) or
// $params for all, with an optional TYPE; without PROVIDER any
// provider's. FUNC, PROVIDER and NAME may be patterns (naming.Pattern:
// "main.*", "ns::Tmpl<*>::get"), which Resolver.SpecWith expands.
type Def struct {
	Text   string
	USDT   *USDTPoint // usdt:PROVIDER:NAME
	Func   string
	File   string // FILE:LINE
	Line   int
	Offset uint64 // FUNC+OFFSET
	// Addr is a raw address ([BIN:]0xADDR), a virtual address of the
	// file, and Bin the file it names ("" for the target's).
	Addr   uint64
	Bin    string
	Return bool
	Args   []Arg
	// Filter, when set, is the predicate a hit must pass: /PRED/ after
	// the probe point, or --filter.
	Filter *Filter
}

// Arg is one argument to fetch.
type Arg struct {
	Name string // NAME=, or the expression's text
	Expr string
	Base string // a variable name, $params, $retval or %REG
	Path []Step
	Type string // u8..u64, s8..s64, x8..x64, f32, f64, string, bytes; "" lets the model decide
}

// StepKind is a part of an access path.
type StepKind uint8

const (
	Field StepKind = iota // .field
	Deref                 // ->field
	Index                 // [N]
)

// Step is one access: a field through a value or a pointer, or an index.
type Step struct {
	Kind  StepKind
	Name  string
	Index int64
}

// ArgTypes are the fetch types a definition may name.
var ArgTypes = map[string]bool{"u8": true, "u16": true, "u32": true, "u64": true, "s8": true, "s16": true, "s32": true,
	"s64": true, "x8": true, "x16": true, "x32": true, "x64": true, "f32": true, "f64": true, "string": true, "bytes": true}

// Parse reads one definition: the probe point and its arguments, separated
// by spaces ('prometheus.(*counter).Add%return c->valInt v=c->valBits:f64').
// Go names with spaces, parentheses and brackets need no quoting beyond the
// shell's.
func Parse(text string) (*Def, error) {
	text, pred, err := cutPredicate(text)
	if err != nil {
		return nil, err
	}
	fields := joinPoint(strings.Fields(text))
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadDef)
	}
	d := &Def{Text: strings.Join(fields, " ")}
	if pred != "" {
		if d.Filter, err = ParseFilter(pred); err != nil {
			return nil, err
		}
		d.Text = strings.Join(append([]string{fields[0], "/" + d.Filter.Text + "/"}, fields[1:]...), " ")
	}
	d, err = parsePoint(d, fields)
	if err != nil {
		return nil, err
	}
	return d, d.checkFilter()
}

// cutPredicate takes bpftrace's /PRED/ out of a definition: from a " /"
// after the probe point to the last "/" (a predicate may divide; the
// arguments after it hold no "/").
func cutPredicate(text string) (rest, pred string, err error) {
	i := strings.Index(text, " /")
	if i < 0 {
		return text, "", nil
	}
	j := strings.LastIndexByte(text, '/')
	if j <= i+1 {
		return "", "", fmt.Errorf("%w %q: a filter is /PRED/, closed by a /", ErrBadDef, text)
	}
	return text[:i] + " " + text[j+1:], text[i+2 : j], nil
}

// checkFilter refuses filter operands a USDT probe cannot read.
func (d *Def) checkFilter() error {
	if d.Filter == nil || d.USDT == nil {
		return nil
	}
	for _, a := range d.Filter.Operands {
		if _, ok := USDTArg(a.Base); (!ok && !IsBuiltin(a.Base)) || len(a.Path) > 0 {
			return fmt.Errorf("%w %q: filter operand %q: a USDT probe's are arg0, arg1, ... or a builtin (%s)", ErrBadDef, d.Text, a.Expr, builtinNames())
		}
	}
	return nil
}

// parsePoint reads the probe point and the arguments.
func parsePoint(d *Def, fields []string) (*Def, error) {
	point := fields[0]
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadDef, d.Text, fmt.Sprintf(format, a...))
	}
	if rest, ok := strings.CutPrefix(point, "usdt:"); ok {
		return parseUSDT(d, rest, fields[1:])
	}
	if p, ok := strings.CutSuffix(point, "%return"); ok {
		d.Return, point = true, p
	}
	if name, after, ok := cutQuoted(point); ok {
		// "NAME" is a function named exactly so, whatever it holds
		// (bpftrace's quoting of a symbol with ':' or '+').
		if name == "" {
			return nil, bad("a quoted function name is \"NAME\", closed by a quote")
		}
		d.Func = name
		if after != "" {
			off, err := strconv.ParseUint(strings.TrimPrefix(after, "+"), 0, 64)
			if err != nil || after[0] != '+' {
				return nil, bad("%q after a quoted function name: want +OFFSET or %%return", after)
			}
			d.Offset = off
		}
	} else if bin, addr, ok := rawAddr(point); ok {
		if d.Return {
			return nil, bad("%%return applies to a function, not an address")
		}
		d.Bin, d.Addr = bin, addr
	} else if i := lineColon(point); i >= 0 {
		n, err := strconv.Atoi(point[i+1:])
		if err != nil || n <= 0 {
			return nil, bad("%q is not a line number (FUNC:LINE or FILE:LINE)", point[i+1:])
		}
		d.Line = n
		if where := point[:i]; isSourceFile(where) {
			d.File = where
		} else {
			d.Func = where
		}
		if d.Return {
			return nil, bad("%%return applies to a function, not a line")
		}
	} else {
		d.Func = point
		if i := strings.LastIndexByte(point, '+'); i > 0 && !strings.ContainsAny(point[i:], ")]>") {
			off, err := strconv.ParseUint(point[i+1:], 0, 64)
			if err != nil {
				return nil, bad("%q is not an offset (FUNC+OFFSET)", point[i+1:])
			}
			d.Func, d.Offset = point[:i], off
		}
	}
	if d.Func == "" && d.File == "" && d.Addr == 0 {
		return nil, bad("no function")
	}
	if _, _, quoted := cutQuoted(point); !quoted && strings.Contains(d.Func, "%") {
		return nil, bad("%%return can only end a function probe (FUNC%%return)")
	}
	for _, f := range fields[1:] {
		a, err := parseArg(f)
		if err != nil {
			return nil, bad("argument %q: %v", f, err)
		}
		d.Args = append(d.Args, a)
	}
	return d, nil
}

// rawAddr splits a raw address probe point, [BIN:]0xADDR.
func rawAddr(point string) (bin string, addr uint64, ok bool) {
	hex := point
	if i := strings.LastIndexByte(point, ':'); i >= 0 {
		bin, hex = point[:i], point[i+1:]
		if bin == "" {
			return "", 0, false
		}
	}
	if !strings.HasPrefix(hex, "0x") && !strings.HasPrefix(hex, "0X") {
		return "", 0, false
	}
	addr, err := strconv.ParseUint(hex[2:], 16, 64)
	return bin, addr, err == nil && addr != 0
}

// cutQuoted splits a quoted function name, "NAME" then what follows
// ("+OFFSET"); name is "" when the quote is not closed.
func cutQuoted(point string) (name, after string, ok bool) {
	rest, ok := strings.CutPrefix(point, `"`)
	if !ok {
		return "", "", false
	}
	name, after, closed := strings.Cut(rest, `"`)
	if !closed {
		return "", "", true
	}
	return name, after, true
}

// USDTPoint names USDT probes: a provider (any when "") and a name, each
// a shell pattern.
type USDTPoint struct {
	Provider, Name string
}

// String is usdt:PROVIDER:NAME as written.
func (u *USDTPoint) String() string {
	if u.Provider == "" {
		return "usdt:" + u.Name
	}
	return "usdt:" + u.Provider + ":" + u.Name
}

// In is the probes of all the point names, in address order.
func (u *USDTPoint) In(all []usdt.Probe) []usdt.Probe {
	provider := u.Provider
	if provider == "" {
		provider = "*"
	}
	return usdt.Named(all, provider, u.Name)
}

// parseUSDT reads usdt:[PROVIDER:]NAME and its arguments: argN or
// $params, each with an optional NAME= and :TYPE.
func parseUSDT(d *Def, point string, args []string) (*Def, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadDef, d.Text, fmt.Sprintf(format, a...))
	}
	provider, name, ok := strings.Cut(point, ":")
	if !ok {
		provider, name = "", point
	}
	if name == "" || strings.Contains(name, ":") || strings.ContainsAny(point, "%+") {
		return nil, bad("a USDT probe is usdt:PROVIDER:NAME or usdt:NAME (readelf -n lists them; goprobe list -x BIN too)")
	}
	d.USDT = &USDTPoint{Provider: provider, Name: name}
	for _, f := range args {
		a, err := parseArg(f)
		if err != nil {
			return nil, bad("argument %q: %v", f, err)
		}
		if _, ok := USDTArg(a.Base); (!ok && a.Base != "$params" && !IsBuiltin(a.Base)) || len(a.Path) > 0 {
			return nil, bad("argument %q: a USDT probe's arguments are arg0, arg1, ... or $params, without fields, or a builtin (%s)", f, builtinNames())
		}
		d.Args = append(d.Args, a)
	}
	return d, nil
}

// USDTArg is the index N of a USDT argument's name argN.
func USDTArg(base string) (int, bool) {
	n, ok := strings.CutPrefix(base, "arg")
	if !ok || n == "" || len(n) > 1 && n[0] == '0' {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0
}

// joinPoint rejoins a probe point that the split cut inside brackets: a
// C++ or Rust name's template arguments are printed with spaces
// ('real::total<int, long>%return'). Fields join while a '<', '(' or '['
// of the point is open; a point whose brackets never close (operator<)
// stays as it was split.
func joinPoint(fields []string) []string {
	depth := 0
	for i, f := range fields {
		for _, c := range f {
			switch c {
			case '<', '(', '[':
				depth++
			case '>', ')', ']':
				depth--
			}
		}
		if depth <= 0 {
			if i == 0 {
				return fields
			}
			point := strings.Join(fields[:i+1], " ")
			return append([]string{point}, fields[i+1:]...)
		}
	}
	return fields
}

func parseArg(s string) (Arg, error) {
	a := Arg{}
	if i := strings.IndexByte(s, '='); i > 0 && isIdent(s[:i]) {
		a.Name, s = s[:i], s[i+1:]
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if t := s[i+1:]; ArgTypes[t] {
			a.Type, s = t, s[:i]
		} else {
			return a, fmt.Errorf("unknown type %q (u8..u64, s8..s64, x8..x64, f32, f64, string, bytes)", t)
		}
	}
	a.Expr = s
	if a.Name == "" {
		a.Name = s
	}
	// *EXPR: what the pointer EXPR points to (a whole struct), as EXPR[0].
	whole := strings.HasPrefix(s, "*")
	if whole {
		s = s[1:]
	}

	// The base: up to the first '.', '-' of '->', or '['.
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == '[' || (s[i] == '-' && i+1 < len(s) && s[i+1] == '>') {
			end = i
			break
		}
	}
	a.Base = s[:end]
	if a.Base == "" {
		return a, errors.New("no variable before the access path")
	}
	rest := s[end:]
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "->"), rest[0] == '.':
			kind, skip := Field, 1
			if rest[0] == '-' {
				kind, skip = Deref, 2
			}
			rest = rest[skip:]
			n := 0
			for n < len(rest) && (isIdentByte(rest[n])) {
				n++
			}
			if n == 0 {
				return a, errors.New("a field name must follow . or ->")
			}
			a.Path = append(a.Path, Step{Kind: kind, Name: rest[:n]})
			rest = rest[n:]
		case rest[0] == '[':
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return a, errors.New("unclosed [")
			}
			n, err := strconv.ParseInt(rest[1:j], 0, 64)
			if err != nil || n < 0 {
				return a, fmt.Errorf("index %q is not a number", rest[1:j])
			}
			a.Path = append(a.Path, Step{Kind: Index, Index: n})
			rest = rest[j+1:]
		default:
			return a, fmt.Errorf("unexpected %q", rest)
		}
	}
	if whole {
		a.Path = append(a.Path, Step{Kind: Index, Index: 0})
	}
	return a, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// lineColon is the index of the ':' before a line number: the last colon
// that is not half of Rust's or C++'s "::", or -1.
func lineColon(p string) int {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] != ':' {
			continue
		}
		if p[i-1] == ':' || i+1 < len(p) && p[i+1] == ':' {
			return -1
		}
		return i
	}
	return -1
}

func isSourceFile(s string) bool {
	for _, ext := range []string{".go", ".c", ".h", ".cc", ".cpp", ".rs", ".zig"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

package gen

import (
	"debug/dwarf"
	"debug/elf"
	"strings"
)

// Which call an event is. A function's k-th event is its k-th call unless
// two of its sites fire out of call order: Go's DWARF may give an
// instruction two inline calls share to the later call's expansion, whose
// site then fires first. The evidence that pairs them is outside goprobe:
// the program's own record says which statement made each call (parsed
// with the program's structure), and the compiler's DWARF says which
// statement's expansion holds each site (its call line). Nothing is paired
// by the values printed.

// stmt is a call statement: the caller's index (-1: main) and the index
// of the call in the caller's Calls (in main: in Roots).
type stmt struct{ caller, index int }

// noStmt is an event whose site names no one statement (an out-of-line
// entry, a site no expansion of the function holds).
var noStmt = stmt{-2, -1}

// callee is the function stmt s calls.
func (p *Program) callee(s stmt) int {
	if s.caller < 0 {
		return p.Roots[s.index]
	}
	return p.Funcs[s.caller].Calls[s.index].Callee
}

// returnsEarly says whether f returns before its calls when its first
// parameter is a (the guards each language's source writes).
func returnsEarly(f *Func, lang Lang, a int64) bool {
	switch {
	case f.Kind == KGuard && lang == C:
		return a&7 < 3
	case f.Kind == KGuard, f.Kind == KPartial:
		return a&3 != 0
	}
	return false
}

// statements parses a record's calls, in the order the program made them
// (seq: each call's function), into the statement that made each: main
// calls each root in turn, each function records its call, then returns
// early or makes its calls in order (a Cond call when its first parameter
// is odd, a loop's Times times). first gives a function's k-th call's
// first parameter. It says false unless the parse takes the whole record.
func (p *Program) statements(seq []string, first func(fn string, k int) (int64, bool), lang Lang) ([]stmt, bool) {
	if len(p.Roots) == 0 {
		return nil, false
	}
	out := make([]stmt, len(seq))
	seen := map[string]int{}
	pos := 0
	var visit func(fi int, s stmt) bool
	visit = func(fi int, s stmt) bool {
		f := p.Funcs[fi]
		if pos >= len(seq) || seq[pos] != f.Name {
			return false
		}
		out[pos] = s
		pos++
		a, ok := first(f.Name, seen[f.Name])
		seen[f.Name]++
		if !ok {
			return false
		}
		if returnsEarly(f, lang, a) {
			return true
		}
		for ci, c := range f.Calls {
			if c.Cond && a&1 == 0 {
				continue
			}
			for t := 0; t < max(1, c.Times); t++ {
				if !visit(c.Callee, stmt{fi, ci}) {
					return false
				}
			}
		}
		return true
	}
	for pos < len(seq) {
		for ri, fi := range p.Roots {
			if !visit(fi, stmt{-1, ri}) {
				return nil, false
			}
		}
	}
	return out, true
}

// callLines finds each call statement's line (1-based) in src, the
// program's source: a function's body runs from its definition (a line at
// column 0 naming it, not a declaration) to the next "}" at column 0, and
// its k-th line that calls a function of the program is its k-th call.
func (p *Program) callLines(src string) (map[int]stmt, bool) {
	lines := strings.Split(src, "\n")
	byName := map[string]int{}
	for i, f := range p.Funcs {
		byName[f.Name] = i
	}
	out := map[int]stmt{}
	for ci := -1; ci < len(p.Funcs); ci++ {
		name, want := "main", []int(p.Roots)
		if ci >= 0 {
			name, want = p.Funcs[ci].Name, nil
			for _, c := range p.Funcs[ci].Calls {
				want = append(want, c.Callee)
			}
		}
		start := definition(lines, name)
		if start < 0 {
			return nil, false
		}
		k := 0
		for ln := start + 1; ln < len(lines) && !strings.HasPrefix(lines[ln], "}"); ln++ {
			called, ok := calledIn(lines[ln], byName)
			if !ok {
				continue
			}
			if k >= len(want) || called != want[k] {
				return nil, false
			}
			out[ln+1] = stmt{ci, k}
			k++
		}
		if k != len(want) {
			return nil, false
		}
	}
	return out, true
}

// definition is the index of the line that defines function name.
func definition(lines []string, name string) int {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if l != "" && l[0] != ' ' && l[0] != '\t' && strings.Contains(l, name+"(") && !strings.HasSuffix(t, ";") &&
			!strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "#") {
			return i
		}
	}
	return -1
}

// calledIn says which of the program's functions line calls (fnNN().
func calledIn(line string, byName map[string]int) (int, bool) {
	for i := 0; i+5 <= len(line); i++ {
		if line[i] != 'f' || !strings.HasPrefix(line[i:], "fn") {
			continue
		}
		if j := strings.IndexByte(line[i:], '('); j > 0 {
			if fi, ok := byName[line[i:i+j]]; ok && (i == 0 || !isIdent(line[i-1])) {
				return fi, true
			}
		}
	}
	return 0, false
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// expansion is one inline expansion of a program function in the binary.
type expansion struct {
	fi     int
	ranges [][2]uint64
	s      stmt
}

// expansions reads the compiler's DWARF of bin: each inline expansion of
// a program function with the statement on its call line.
func (p *Program) expansions(bin string, lines map[int]stmt) ([]expansion, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, fn := range p.Funcs {
		byName[fn.Name] = i
	}
	names := map[dwarf.Offset]string{}
	name := func(off dwarf.Offset) string {
		if n, ok := names[off]; ok {
			return n
		}
		r := d.Reader()
		r.Seek(off)
		e, err := r.Next()
		n := ""
		if err == nil && e != nil {
			n, _ = e.Val(dwarf.AttrName).(string)
			if n == "" {
				if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
					r.Seek(o)
					if e, err := r.Next(); err == nil && e != nil {
						n, _ = e.Val(dwarf.AttrName).(string)
					}
				}
			}
		}
		names[off] = n
		return n
	}
	var out []expansion
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return out, nil
		}
		if e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			continue
		}
		n := name(o)
		if i := strings.LastIndexAny(n, ".:"); i >= 0 {
			n = n[i+1:]
		}
		fi, ok := byName[n]
		if !ok {
			continue
		}
		line, _ := e.Val(dwarf.AttrCallLine).(int64)
		s, ok := lines[int(line)]
		if !ok || p.callee(s) != fi {
			s = noStmt
		}
		rs, err := d.Ranges(e)
		if err != nil {
			continue
		}
		out = append(out, expansion{fi, rs, s})
	}
}

// siteStmt is the statement whose expansion of function fi holds addr:
// noStmt when none does, or expansions of several statements do.
func siteStmt(exps []expansion, fi int, addr uint64) stmt {
	s := noStmt
	for _, x := range exps {
		if x.fi != fi || x.s == noStmt {
			continue
		}
		for _, r := range x.ranges {
			if addr >= r[0] && addr < r[1] {
				if s != noStmt && s != x.s {
					return noStmt
				}
				s = x.s
			}
		}
	}
	return s
}

// pairEvents gives each event (by its site's statement, in event order)
// its call (by the statement that made it, in call order): an event whose
// statement is known takes that statement's earliest call left; any other
// takes the earliest call left of a statement whose calls its known
// events do not all take, else the earliest call left.
func pairEvents(evs, calls []stmt) []int {
	known := map[stmt]int{}
	for _, s := range evs {
		if s != noStmt {
			known[s]++
		}
	}
	made := map[stmt]int{}
	for _, s := range calls {
		made[s]++
	}
	used := make([]bool, len(calls))
	earliest := func(ok func(stmt) bool) int {
		for k, s := range calls {
			if !used[k] && ok(s) {
				return k
			}
		}
		return -1
	}
	out := make([]int, len(evs))
	for e, s := range evs {
		k := -1
		if s != noStmt {
			k = earliest(func(c stmt) bool { return c == s })
		} else {
			k = earliest(func(c stmt) bool { return known[c] < made[c] })
		}
		if k < 0 {
			k = earliest(func(stmt) bool { return true })
		}
		used[k] = true
		out[e] = k
	}
	return out
}

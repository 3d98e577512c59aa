// Package varsview is gofunct's view of the variables available at an
// address, as perf probe -V prints them: each one's kind, name, type in the
// function's language and location, in a table.
package varsview

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/table"
	"github.com/binscope/binscope/types"
)

// WriteVarsAt answers gofunct --vars FUNC[:LINE|:+OFFSET]: WriteVars at the
// function's entry (after the prologue in unoptimised code, as perf
// probe -V looks), or at the first address of a line of it, LINE in its
// file or OFFSET lines after its declaration. A line without code is an
// error wrapping types.ErrNotFound that lists the lines with code.
func WriteVarsAt(w io.Writer, m *code.Model, d funcview.Debug, arg string) error {
	name, line, rel := arg, 0, false
	if i := strings.LastIndexByte(arg, ':'); i > 0 && !strings.HasSuffix(arg[:i], ":") {
		spec := arg[i+1:]
		rel = strings.HasPrefix(spec, "+")
		n, err := strconv.Atoi(strings.TrimPrefix(spec, "+"))
		if err == nil {
			name, line = arg[:i], n
		}
	}
	fn, err := funcview.FindFunc(m, name)
	if err != nil {
		return err
	}
	// At the entry of unoptimised code the frame slots are not filled
	// yet: perf probe -V FUNC looks after the prologue too.
	pc := d.PrologueEnd(fn)
	if fn.LowPC != 0 && !framed(fn) {
		pc = fn.LowPC
	}
	where := fn.Name
	if line != 0 || rel {
		if rel {
			line += fn.Decl.Line
		}
		if pc, err = lineAddr(m, d, fn, line); err != nil {
			return err
		}
		where = fmt.Sprintf("%s:%d", fn.Name, line)
	}
	vars, err := d.VarsAt(pc)
	if err != nil {
		return err
	}
	return WriteVars(w, fn, where, pc, vars)
}

// WriteVars prints the variables available at pc, as perf probe -V does,
// with each one's type in the function's language and its location:
//
//	Available variables at main.work:17 (0x49e148, main.work+0x8)
//	        param  a      *acc   RAX
//	        local  i      int    RCX
//	        param  x      int    RCX     (inlined main.twice)
func WriteVars(w io.Writer, fn *types.Func, where string, pc uint64, vars []types.Var) error {
	fmt.Fprintf(w, "Available variables at %s (%#x, %s+%#x)\n", where, pc, fn.Name, pc-fn.LowPC)
	t := table.New(w, table.Left(""), table.Left(""), table.Left(""), table.Left(""), table.Left(""), table.Left(""))
	for _, v := range vars {
		kind := "local"
		if v.Param {
			kind = "param"
		}
		ty := types.Spell(v.Type, fn.Lang, types.SyntaxPahole)
		if fn.Lang == types.LangGo {
			if pkg := funcview.GoPackage(fn.Name); pkg != "" {
				ty = strings.ReplaceAll(ty, pkg+".", "")
			}
		}
		inlined := ""
		if v.Inline != "" {
			inlined = "(inlined " + v.Inline + ")"
		}
		t.Row("", kind, v.Name, ty, v.Loc.String(), inlined)
	}
	return t.Flush()
}

// lineAddr is the lowest address of fn that carries line, or an
// inline expansion's entry on it.
func lineAddr(m *code.Model, d funcview.Debug, fn *types.Func, line int) (uint64, error) {
	rows, err := d.Lines(fn)
	if err != nil {
		return 0, err
	}
	file, lines := code.SourceLines(fn, rows, code.InlinedInto(m.Funcs(), fn.Name))
	var have []string
	for _, l := range lines {
		addrs := append([]uint64{}, l.Addrs...)
		for _, in := range l.Inlines {
			addrs = append(addrs, in.Site.EntryPC)
		}
		if len(addrs) > 0 {
			have = append(have, strconv.Itoa(l.Line))
		}
		if l.Line == line && len(addrs) > 0 {
			sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
			return addrs[0], nil
		}
	}
	return 0, fmt.Errorf("%s: %w: line %d of %s has no code in %s (lines with code: %s)", m.Path, types.ErrNotFound, line, file, fn.Name, strings.Join(have, " "))
}

// framed reports whether one of fn's parameters lives in a frame slot that
// the prologue fills.
func framed(fn *types.Func) bool {
	for _, p := range fn.Params {
		if p.PC > fn.LowPC {
			return true
		}
	}
	return false
}

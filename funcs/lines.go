package funcs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/binscope/binscope/internal/table"
	"github.com/binscope/binscope/types"
)

// Inlined is an inline expansion inside some function: the function whose
// body was inlined, and where.
type Inlined struct {
	Callee string
	Site   types.InlineSite
}

// InlinedInto returns the expansions whose caller is the function called
// caller, in entry address order.
func InlinedInto(fns []*types.Func, caller string) []Inlined {
	var out []Inlined
	for _, fn := range fns {
		for _, s := range fn.Inlined {
			if s.Caller == caller {
				out = append(out, Inlined{Callee: fn.Name, Site: *s})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Site.EntryPC < out[j].Site.EntryPC })
	return out
}

// SourceLine is one line of a function's source as WriteLines prints it.
type SourceLine struct {
	Line int
	// Addrs are the statement addresses of the line's own code; Inlines
	// the expansions called from the line.
	Addrs   []uint64
	Inlines []Inlined
}

// OwnFile is the file that holds fn's source: its declaration file, or
// the file most of its line rows name.
func OwnFile(fn *types.Func, rows []types.Line) string {
	if fn.Decl.File != "" {
		return fn.Decl.File
	}
	count := map[string]int{}
	best := ""
	for _, r := range rows {
		count[r.File]++
		if count[r.File] > count[best] {
			best = r.File
		}
	}
	return best
}

// SourceLines gathers, for each line of fn's own file from its declaration
// to its last line with code, the addresses that carry it and the inline
// expansions called from it.
func SourceLines(fn *types.Func, rows []types.Line, inl []Inlined) (file string, lines []SourceLine) {
	file = OwnFile(fn, rows)
	addrs := map[int][]uint64{}
	all := map[int][]uint64{}
	first, last := fn.Decl.Line, 0
	inlined := func(a uint64) bool {
		for _, in := range inl {
			if covers(in.Site.Ranges, a) {
				return true
			}
		}
		return false
	}
	for _, r := range rows {
		// Rows inside an expansion's ranges are the inlined body's, even
		// when it comes from the same file.
		if r.File != file || r.Line <= 0 || r.Line < fn.Decl.Line || inlined(r.Addr) {
			continue
		}
		if r.Stmt {
			addrs[r.Line] = appendNew(addrs[r.Line], r.Addr)
		}
		all[r.Line] = appendNew(all[r.Line], r.Addr)
		if first == 0 || r.Line < first {
			first = r.Line
		}
		last = max(last, r.Line)
	}
	calls := map[int][]Inlined{}
	for _, in := range inl {
		if in.Site.CallFile == file && in.Site.CallLine >= first {
			calls[in.Site.CallLine] = append(calls[in.Site.CallLine], in)
			last = max(last, in.Site.CallLine)
		}
	}
	for l := first; l <= last && l > 0; l++ {
		a := addrs[l]
		if len(a) == 0 {
			a = all[l]
		}
		lines = append(lines, SourceLine{Line: l, Addrs: a, Inlines: calls[l]})
	}
	return file, lines
}

func appendNew(s []uint64, v uint64) []uint64 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// WriteLines prints fn's source lines as perf probe -L does, with the
// addresses: a header "<FUNC@FILE:LINE>", then per line its number, its
// offset from the declaration line (+N, the form FUNC:+N takes), the
// statement addresses, the inline expansions it calls and the source text
// when the file can be read. Lines without code carry no number.
func WriteLines(w io.Writer, fn *types.Func, rows []types.Line, inl []Inlined) error {
	file, lines := SourceLines(fn, rows, inl)
	src := readSource(file)
	fmt.Fprintf(w, "<%s@%s:%d>\n", fn.Name, file, fn.Decl.Line)
	base := fn.Decl.Line
	if base == 0 && len(lines) > 0 {
		base = lines[0].Line
	}
	for _, l := range lines {
		text := ""
		if l.Line-1 < len(src) {
			text = src[l.Line-1]
		}
		if len(l.Addrs) == 0 && len(l.Inlines) == 0 {
			fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%14s  %-24s %s", "", "", text), " "))
			continue
		}
		var where []string
		for _, a := range l.Addrs {
			where = append(where, fmt.Sprintf("%#x", a))
		}
		for _, in := range l.Inlines {
			where = append(where, fmt.Sprintf("[inline %s@%#x]", in.Callee, in.Site.EntryPC))
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%6d %+6d  %-24s %s", l.Line, l.Line-base, strings.Join(where, " "), text), " "))
	}
	return nil
}

// readSource returns a file's lines, or nil when it cannot be read (the
// binary was built elsewhere).
func readSource(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, strings.ReplaceAll(sc.Text(), "\t", "    "))
	}
	return out
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
			if pkg := GoPackage(fn.Name); pkg != "" {
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

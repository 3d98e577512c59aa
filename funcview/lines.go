package funcview

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/types"
)

// WriteLines prints fn's source lines as perf probe -L does, with the
// addresses: a header "<FUNC@FILE:LINE>", then per line its number, its
// offset from the declaration line (+N, the form FUNC:+N takes), the
// statement addresses, the inline expansions it calls and the source text
// when the file can be read. Lines without code carry no number.
func WriteLines(w io.Writer, fn *types.Func, rows []types.Line, inl []code.Inlined) error {
	file, lines := code.SourceLines(fn, rows, inl)
	src := readSource(file)
	if fn.SymbolOnly {
		// No debug info says where it is declared (lost, see
		// types.Func.LostDIE, or never written).
		fmt.Fprintf(w, "<%s@%s:?>\n", fn.Name, file)
	} else {
		fmt.Fprintf(w, "<%s@%s:%d>\n", fn.Name, file, fn.Decl.Line)
	}
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

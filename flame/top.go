package flame

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/binscope/binscope/internal/table"
	"github.com/binscope/binscope/stack"
)

// TopRow is one function's share of the samples. Self counts the samples
// in which it was the innermost frame (running its own code), Total those
// in which it was anywhere on the stack: a function that recurses counts
// once per stack, so Total never exceeds the samples.
type TopRow struct {
	Name   string
	Module string
	Self   uint64
	Total  uint64
}

// Top returns the n functions with the most self samples, ties broken by
// total samples, then name and module; n <= 0 returns every function. A
// function is a name in a module: an inline expansion counts as the
// function it expands, wherever it was expanded.
func Top(stacks []stack.Stack, n int) []TopRow {
	type fn struct{ name, module string }
	type acc struct {
		row  TopRow
		seen int // 1 + the index of the last stack that added to Total
	}
	byFn := map[fn]*acc{}
	for i := range stacks {
		s := &stacks[i]
		if len(s.Frames) == 0 || s.Count == 0 {
			continue
		}
		var a *acc
		for j := range s.Frames {
			f := &s.Frames[j]
			k := fn{f.Name, f.Module}
			a = byFn[k]
			if a == nil {
				a = &acc{row: TopRow{Name: f.Name, Module: f.Module}}
				byFn[k] = a
			}
			if a.seen != i+1 {
				a.seen = i + 1
				a.row.Total += s.Count
			}
		}
		a.row.Self += s.Count // a is the innermost frame's
	}
	rows := make([]TopRow, 0, len(byFn))
	for _, a := range byFn {
		rows = append(rows, a.row)
	}
	slices.SortFunc(rows, func(a, b TopRow) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Module, b.Module)
	})
	if n > 0 && len(rows) > n {
		rows = rows[:n:n]
	}
	return rows
}

// WriteTop prints rows as a table (internal/table): self and total
// samples, each also as a percentage of samples (the profile's total; 0
// prints "-"), then the function and its module.
//
//	 SELF%  SELF  TOTAL%  TOTAL  FUNCTION
//	80.00%    80 100.00%    100  main.inner [app]
func WriteTop(w io.Writer, rows []TopRow, samples uint64) error {
	t := table.New(w, table.Right("SELF%"), table.Right("SELF"), table.Right("TOTAL%"), table.Right("TOTAL"), table.Left("FUNCTION"))
	for _, r := range rows {
		t.Row(percent(r.Self, samples), strconv.FormatUint(r.Self, 10), percent(r.Total, samples), strconv.FormatUint(r.Total, 10),
			string(appendModule([]byte(cleanName(r.Name)), r.Module)))
	}
	return t.Flush()
}

// percent is v as a percentage of total with two decimals, "-" when there
// is no total.
func percent(v, total uint64) string {
	if total == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(v)/float64(total), 'f', 2, 64) + "%"
}

// appendModule appends " [module]", or " [kernel]" for "[kernel]"; nothing
// for no module.
func appendModule(b []byte, module string) []byte {
	switch {
	case module == "":
		return b
	case strings.HasPrefix(module, "["):
		return append(append(b, ' '), module...)
	}
	b = append(b, " ["...)
	b = append(b, module...)
	return append(b, ']')
}

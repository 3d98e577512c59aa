package flame

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
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
func Top(stacks []Stack, n int) []TopRow {
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

// WriteTop prints rows as a table: self and total samples, each also as
// a percentage of samples (the profile's total; 0 prints "-"), then the
// function and its module. Columns are right-aligned to the widest count.
//
//	 SELF%  SELF  TOTAL%  TOTAL  FUNCTION
//	80.00%    80 100.00%    100  main.inner [app]
func WriteTop(w io.Writer, rows []TopRow, samples uint64) error {
	cw := len("TOTAL")
	for _, r := range rows {
		cw = max(cw, digits(r.Self), digits(r.Total))
	}
	const pw = len("100.00%")
	bw := bufio.NewWriter(w)
	var line []byte
	line = pad(line, "SELF%", pw)
	line = append(line, ' ')
	line = pad(line, "SELF", cw)
	line = append(line, ' ')
	line = pad(line, "TOTAL%", pw)
	line = append(line, ' ')
	line = pad(line, "TOTAL", cw)
	line = append(line, "  FUNCTION\n"...)
	bw.Write(line)
	for _, r := range rows {
		line = pad(line[:0], percent(r.Self, samples), pw)
		line = append(line, ' ')
		line = pad(line, strconv.FormatUint(r.Self, 10), cw)
		line = append(line, ' ')
		line = pad(line, percent(r.Total, samples), pw)
		line = append(line, ' ')
		line = pad(line, strconv.FormatUint(r.Total, 10), cw)
		line = append(line, "  "...)
		line = append(line, cleanName(r.Name)...)
		line = appendModule(line, r.Module)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// percent is v as a percentage of total with two decimals, "-" when there
// is no total.
func percent(v, total uint64) string {
	if total == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(v)/float64(total), 'f', 2, 64) + "%"
}

func digits(v uint64) int { return len(strconv.FormatUint(v, 10)) }

// pad appends s right-aligned in width columns.
func pad(b []byte, s string, width int) []byte {
	for range width - len(s) {
		b = append(b, ' ')
	}
	return append(b, s...)
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

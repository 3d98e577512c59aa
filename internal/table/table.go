// Package table writes the tools' tables (goprobe stat, hist and profile's
// top functions, gofunct --vars) in one style: plain columns two spaces
// apart, no borders or rules, text left-aligned and numbers right-aligned,
// never wrapped, no trailing blanks. What awk or strings.Fields reads of
// one row is its cells, as with pahole's and perf's tables.
//
// It was github.com/olekukonko/tablewriter, whose packages' init, run by
// every tool at its start, filled a 660 KB width cache: 165 page faults
// and 0.5 ms of CPU on each gopahole run, which prints no table. A cell's
// width is still the sum of its runes' display widths (displaywidth, as
// tablewriter counted them).
package table

import (
	"io"

	"github.com/clipperhouse/displaywidth"
)

// Column is one column: its header and whether its cells are numbers,
// aligned right.
type Column struct {
	Name  string
	Right bool
}

// Left and Right are columns of text and of numbers.
func Left(name string) Column  { return Column{Name: name} }
func Right(name string) Column { return Column{Name: name, Right: true} }

// Table collects rows and writes them aligned on Flush.
type Table struct {
	w    io.Writer
	cols []Column
	rows [][]string
}

// New starts a table of cols on w; the header row is printed when a
// column has a name.
func New(w io.Writer, cols ...Column) *Table {
	return &Table{w: w, cols: cols}
}

// Row adds a row; missing cells are empty, extra ones dropped.
func (t *Table) Row(cells ...string) {
	row := make([]string, len(t.cols))
	copy(row, cells)
	t.rows = append(t.rows, row)
}

// Flush writes the table; a table without rows writes only its header.
func (t *Table) Flush() error {
	rows := t.rows
	header := make([]string, len(t.cols))
	named := false
	for i, c := range t.cols {
		header[i] = c.Name
		named = named || c.Name != ""
	}
	if named {
		rows = append([][]string{header}, rows...)
	}
	widths := make([][]int, len(rows))
	most := make([]int, len(t.cols))
	for r, row := range rows {
		widths[r] = make([]int, len(row))
		for i, cell := range row {
			widths[r][i] = width(cell)
			most[i] = max(most[i], widths[r][i])
		}
	}
	var out []byte
	for r, row := range rows {
		for i, cell := range row {
			pad := most[i] - widths[r][i]
			if t.cols[i].Right {
				out = blanks(out, pad)
			}
			out = append(out, cell...)
			if !t.cols[i].Right {
				out = blanks(out, pad)
			}
			out = blanks(out, 2)
		}
		// The blanks that keep the columns apart end no line.
		for len(out) > 0 && out[len(out)-1] == ' ' {
			out = out[:len(out)-1]
		}
		out = append(out, '\n')
	}
	_, err := t.w.Write(out)
	return err
}

// width is cell's width on a terminal: its runes' display widths.
func width(cell string) int {
	n := 0
	for _, r := range cell {
		n += displaywidth.Rune(r)
	}
	return n
}

func blanks(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// Package table writes the tools' tables (goprobe stat, hist and profile's
// top functions, gofunct --vars) in one style, through
// github.com/olekukonko/tablewriter: plain columns two spaces apart, no
// borders or rules, text left-aligned and numbers right-aligned, never
// wrapped, no trailing blanks. What awk or strings.Fields reads of one
// row is its cells, as with pahole's and perf's tables.
package table

import (
	"bytes"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
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
	align := make([]tw.Align, len(t.cols))
	pad := make([]tw.Padding, len(t.cols))
	header := make([]string, len(t.cols))
	named := false
	for i, c := range t.cols {
		align[i] = tw.AlignLeft
		if c.Right {
			align[i] = tw.AlignRight
		}
		pad[i] = tw.Padding{Left: "", Right: "  ", Overwrite: true}
		header[i] = c.Name
		named = named || c.Name != ""
	}
	var buf bytes.Buffer
	tab := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithHeaderPaddingPerColumn(pad),
		tablewriter.WithRowPaddingPerColumn(pad),
	)
	if named {
		tab.Header(header)
	}
	if err := tab.Bulk(t.rows); err != nil {
		return err
	}
	if err := tab.Render(); err != nil {
		return err
	}
	// Right padding keeps the columns apart; at the end of a line it is
	// only blanks.
	var out []byte
	for _, line := range bytes.SplitAfter(buf.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		out = append(out, bytes.TrimRight(line, " \n")...)
		out = append(out, '\n')
	}
	_, err := t.w.Write(out)
	return err
}

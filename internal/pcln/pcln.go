// Package pcln reads the functions of a Go binary from its .gopclntab, the
// table the Go runtime itself uses for stack traces. It is there even when
// the binary was stripped of DWARF (-ldflags='-s -w' or strip): names,
// entry addresses, sizes and the source file and line of each function
// (Functions), and the inline tree the runtime keeps for each of them
// (Inlines).
package pcln

import (
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Functions lists the functions of ef's .gopclntab in address order.
func Functions(ef *elfx.File) ([]*types.Func, error) {
	t, err := Open(ef)
	if err != nil {
		return nil, err
	}
	return t.Functions(ef.Path)
}

// Functions lists the table's functions in address order; path names the
// file in errors.
func (t *Table) Functions(path string) (fns []*types.Func, err error) {
	defer elfx.Catch(path, ".gopclntab", "table", &fns, &err) // debug/gosym
	for i := range t.Lines.Funcs {
		f := &t.Lines.Funcs[i]
		fn := &types.Func{Name: f.Name, Linkage: f.Name, Lang: types.LangGo, LowPC: f.Entry, Size: f.End - f.Entry,
			Ranges: [][2]uint64{{f.Entry, f.End}}, External: true, SymbolOnly: true}
		if file, line, _ := t.Lines.PCToLine(f.Entry); file != "" {
			fn.Decl = types.Decl{File: file, Line: line}
		}
		fns = append(fns, fn)
	}
	return fns, nil
}

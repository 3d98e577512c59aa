// Package pcln reads the functions of a Go binary from its .gopclntab, the
// table the Go runtime itself uses for stack traces. It is there even when
// the binary was stripped of DWARF (-ldflags='-s -w' or strip): names,
// entry addresses, sizes and the source file and line of each function
// (Functions), and the inline tree the runtime keeps for each of them
// (Inlines).
package pcln

import (
	"debug/gosym"
	"fmt"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Has reports whether ef carries a Go pclntab.
func Has(ef *elfx.File) bool { return ef.Section(".gopclntab") != nil }

// Functions lists the functions of ef's .gopclntab in address order.
func Functions(ef *elfx.File) (fns []*types.Func, err error) {
	defer func() {
		if p := recover(); p != nil {
			fns, err = nil, fmt.Errorf("%s: section .gopclntab: corrupt table: %v", ef.Path, p)
		}
	}()
	sec := ef.Section(".gopclntab")
	if sec == nil {
		return nil, fmt.Errorf("%s: no .gopclntab section: not a Go binary", ef.Path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section .gopclntab: %v", ef.Path, err)
	}
	var text uint64
	if t := ef.Section(".text"); t != nil {
		text = t.Addr
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil {
		return nil, fmt.Errorf("%s: section .gopclntab: %v", ef.Path, err)
	}
	for i := range tab.Funcs {
		f := &tab.Funcs[i]
		fn := &types.Func{Name: f.Name, Linkage: f.Name, Lang: types.LangGo, LowPC: f.Entry, Size: f.End - f.Entry,
			Ranges: [][2]uint64{{f.Entry, f.End}}, External: true, SymbolOnly: true}
		if file, line, _ := tab.PCToLine(f.Entry); file != "" {
			fn.Decl = types.Decl{File: file, Line: line}
		}
		fns = append(fns, fn)
	}
	return fns, nil
}

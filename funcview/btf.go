package funcview

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/binscope/binscope/types"
)

// ListBTF prints functions read from BTF (btf.Funcs), in their order, as
// pfunct -F btf prints them: names, or with ShowPrototypes each prototype
// after the function's decl tags, every parameter's decl tags before its
// type ("a b void foo(void);", "void qux(param_a int arg);"). l's Names
// and Externals pick them; other views need an address or DWARF BTF does
// not have, and are an error naming path.
func ListBTF(w io.Writer, path string, fns []*types.Func, l *Listing) error {
	switch l.Show {
	case ShowNames, ShowPrototypes, ShowNrParams:
	default:
		return fmt.Errorf("%s: BTF has no addresses, locations or inline expansions: read the DWARF (-F dwarf) for this view", path)
	}
	picked := 0
	for _, fn := range fns {
		if len(l.Names) > 0 && !slices.Contains(l.Names, fn.Name) || l.Externals && !fn.External {
			continue
		}
		picked++
		if l.Show == ShowPrototypes {
			fmt.Fprintln(w, TaggedLine(fn))
			continue
		}
		writeFunc(w, fn, l.Show)
	}
	if len(l.Names) > 0 && picked == 0 {
		return fmt.Errorf("%s: section .BTF: no function named %s", path, l.Names[0])
	}
	return nil
}

// TaggedLine is PfunctLine with fn's decl tags (fn.Tags) as pfunct prints
// those it read from BTF: the function's before its prototype, each
// parameter's before its type.
func TaggedLine(fn *types.Func) string {
	if fn.Tags == nil || !fn.Lang.CLike() {
		return PfunctLine(fn)
	}
	proto := &types.FuncProto{Return: fn.Return, Variadic: fn.Variadic}
	for _, p := range fn.Params {
		proto.Params = append(proto.Params, types.FuncParam{Name: p.Name, Type: p.Type})
	}
	s := types.PaholeFuncTagged(proto, fn.Name, fn.Lang, fn.Tags.Param) + ";"
	if len(fn.Tags.Func) > 0 {
		s = strings.Join(fn.Tags.Func, " ") + " " + s
	}
	return s
}

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// pdwtagsName is the name gopahole answers to as dwarves' pdwtags (a
// link so named): scripts that call pdwtags get gopahole's types.
const pdwtagsName = "pdwtags"

// pdwtags prints what dwarves' pdwtags prints of each file: its structs,
// unions and enums as gopahole prints them, each C++ one inside the
// namespaces that name it ("namespace outer {"), its typedefs, then its
// functions as pfunct -P prints them.
func pdwtags(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "pdwtags (gopahole): usage: pdwtags FILE...: the types and functions of each file")
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	for _, path := range args {
		var dump bytes.Buffer
		if code := gopahole([]string{path}, &dump, stderr); code != 0 {
			return code
		}
		spec, _, err := loader.Types(path, nil)
		if err != nil {
			fmt.Fprintf(stderr, "pdwtags (gopahole): %v\n", err)
			return 1
		}
		var typedefs bytes.Buffer
		for _, t := range spec.Types() {
			switch v := t.(type) {
			case *types.Enum:
				if v.Name != "" {
					_ = layout.WriteDecl(&dump, v, nil)
				}
			case *types.Typedef:
				_ = layout.WriteDecl(&typedefs, v, nil)
			}
		}
		layout.WriteInNamespaces(w, dump.String())
		w.Write(typedefs.Bytes())
		fmt.Fprintln(w, "/* Functions: */")
		c, err := loader.OpenCode(path, &loader.CodeOptions{Params: true, SpelledParams: true})
		switch {
		case errors.Is(err, types.ErrNotFound):
			continue // a file of types alone
		case err != nil:
			fmt.Fprintf(stderr, "pdwtags (gopahole): %v\n", err)
			return 1
		}
		for _, fn := range c.Funcs() {
			fmt.Fprintln(w, funcview.PfunctLine(fn))
		}
		c.Close()
	}
	return 0
}

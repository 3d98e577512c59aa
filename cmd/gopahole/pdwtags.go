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
		writeInNamespaces(w, dump.String())
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

// writeInNamespaces writes a gopahole dump with each type whose name is
// qualified (outer::inner::Nested) inside the namespaces that qualify
// it, by its last name: "namespace outer {", "namespace inner {", then
// "struct Nested {"; a namespace stays open over the types it holds in a
// row.
func writeInNamespaces(w io.Writer, dump string) {
	var open []string
	lines := strings.SplitAfter(dump, "\n")
	typeNames := map[string]bool{} // a qualifier that is a type is a class, not a namespace
	for i, l := range lines {
		if i == 0 || strings.HasPrefix(lines[i-1], "}") {
			if f := strings.Fields(l); len(f) > 1 {
				typeNames[f[1]] = true
			}
		}
	}
	for start := 0; start < len(lines); {
		end := start
		for end < len(lines)-1 && !strings.HasPrefix(lines[end], "}") {
			end++
		}
		head := lines[start]
		ns, head := namespaceOf(head, typeNames)
		common := 0
		for common < len(open) && common < len(ns) && open[common] == ns[common] {
			common++
		}
		for i := len(open) - 1; i >= common; i-- {
			fmt.Fprintf(w, "} /* namespace %s */\n", open[i])
		}
		for _, n := range ns[common:] {
			fmt.Fprintf(w, "namespace %s {\n", n)
		}
		open = ns
		io.WriteString(w, head)
		for _, l := range lines[start+1 : end+1] {
			io.WriteString(w, l)
		}
		start = end + 1
	}
	for i := len(open) - 1; i >= 0; i-- {
		fmt.Fprintf(w, "} /* namespace %s */\n", open[i])
	}
}

// namespaceOf splits the type a dump block's first line opens ("struct
// a::b::T<x::y> {") into its namespaces (a, b) and the line with the last
// name alone ("struct T<x::y> {"). Names inside template arguments are
// not split, nor a qualifier typeNames has (a class, whose member types
// keep it: "struct Outer::Inner {").
func namespaceOf(head string, typeNames map[string]bool) ([]string, string) {
	kw, rest, ok := strings.Cut(head, " ")
	if !ok || (kw != "struct" && kw != "class" && kw != "union" && kw != "enum") {
		return nil, head
	}
	name, tail, _ := strings.Cut(rest, " ")
	var parts []string
	depth, from := 0, 0
	for i := 0; i < len(name); i++ {
		switch {
		case name[i] == '<' || name[i] == '(':
			depth++
		case name[i] == '>' || name[i] == ')':
			depth--
		case depth == 0 && strings.HasPrefix(name[i:], "::"):
			if typeNames[name[:i]] {
				i = len(name) // a class's member type: the rest is its name
				continue
			}
			parts = append(parts, name[from:i])
			from = i + 2
			i++
		}
	}
	if len(parts) == 0 {
		return nil, head
	}
	return parts, kw + " " + name[from:] + " " + tail
}

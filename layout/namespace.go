package layout

import (
	"fmt"
	"io"
	"strings"
)

// WriteInNamespaces writes a dump WriteText printed with each type whose
// name is qualified (outer::inner::Nested) inside the namespaces that
// qualify it, by its last name: "namespace outer {", "namespace inner {",
// then "struct Nested {"; a namespace stays open over the types it holds
// in a row. dwarves' pdwtags prints C++ types so.
func WriteInNamespaces(w io.Writer, dump string) {
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

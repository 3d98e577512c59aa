package funcview

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/usdt"
)

// Points says which probe points WritePoints lists and how.
type Points struct {
	// Pattern picks the points whose name matches it: a shell pattern
	// ("*" any text, "/" and ":" included; "?" one character), or without
	// either a part of the name. "" lists every point.
	Pattern string
	// Verbose adds each function's prototype (its parameters and their
	// types) and each USDT probe's arguments, their types and operands.
	Verbose bool
	// Library names, for the points of another file than the main one
	// (a library a process maps, one of several files), that file:
	// each line says it, and source files are not listed.
	Library string
}

// WritePoints lists what goprobe can probe in m's file, one point a line
// as a definition names it: the functions with code (with their inline
// expansions and compiler clones, each a site), the USDT probes of ps
// (usdt:PROVIDER:NAME, with their places and semaphores), and the source
// files of the functions (FILE:LINE). It returns how many it listed.
func WritePoints(w io.Writer, m *code.Model, ps []usdt.Probe, o *Points) int {
	match := pointMatcher(o.Pattern)
	n := 0
	if m != nil {
		files := map[string]bool{}
		for _, fn := range m.Funcs() {
			if fn.LowPC == 0 && len(fn.Inlined) == 0 && len(fn.Clones) == 0 {
				continue
			}
			if fn.Decl.File != "" {
				files[fn.Decl.File] = true
			}
			if !match(fn.Name) {
				continue
			}
			name := fn.Name
			if o.Verbose && !fn.SymbolOnly && (len(fn.Params) > 0 || fn.Decl.File != "") {
				name = Prototype(fn)
			}
			fmt.Fprintf(w, "func %s%s\n", name, siteCounts(fn, o.Library))
			n++
		}
		if o.Library == "" {
			n += writeFiles(w, files, match)
		}
	}
	return n + WriteUSDT(w, ps, o)
}

// siteCounts says how many inline expansions and clones fn has, and in
// which library when lib is not "".
func siteCounts(fn *types.Func, lib string) string {
	var parts []string
	if k := len(fn.Inlined); k > 0 {
		parts = append(parts, fmt.Sprintf("%d inline", k))
	}
	if k := len(fn.Clones); k > 0 {
		parts = append(parts, fmt.Sprintf("%d clone%s", k, plural(k)))
	}
	if fn.LowPC == 0 && len(parts) > 0 {
		parts = append(parts, "no out-of-line copy")
	}
	if lib != "" {
		parts = append(parts, "in "+lib)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeFiles(w io.Writer, files map[string]bool, match func(string) bool) int {
	var names []string
	for f := range files {
		if match(f) {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		fmt.Fprintf(w, "file %s\n", f)
	}
	return len(names)
}

// WriteUSDT lists the USDT probes of ps that o picks, one line per
// PROVIDER:NAME with the number of places and whether it has a
// semaphore; verbose, the arguments of its first place.
func WriteUSDT(w io.Writer, ps []usdt.Probe, o *Points) int {
	match := pointMatcher(o.Pattern)
	var names []string
	by := map[string][]usdt.Probe{}
	for _, p := range ps {
		name := p.String()
		if !match(name) && !match("usdt:"+name) {
			continue
		}
		if by[name] == nil {
			names = append(names, name)
		}
		by[name] = append(by[name], p)
	}
	sort.Strings(names)
	for _, name := range names {
		places := by[name]
		fmt.Fprintf(w, "usdt:%s (%d site%s", name, len(places), plural(len(places)))
		if places[0].Semaphore != 0 {
			fmt.Fprint(w, ", semaphore")
		}
		if o.Library != "" {
			fmt.Fprintf(w, ", in %s", o.Library)
		}
		fmt.Fprintln(w, ")")
		if !o.Verbose {
			continue
		}
		for i, a := range places[0].Args {
			typ := a.Type()
			if a.Unreadable != "" {
				typ = "? (" + a.Unreadable + ")"
			}
			fmt.Fprintf(w, "\targ%d: %s %s\n", i, typ, a.Text)
		}
	}
	return len(names)
}

// pointMatcher matches names against a pattern, the one definitions
// use (naming.Pattern), or a part of the name when the pattern has no
// wildcard.
func pointMatcher(pat string) func(string) bool {
	if pat == "" {
		return func(string) bool { return true }
	}
	p := naming.NewPattern(pat)
	if !p.Wild() {
		return func(s string) bool { return strings.Contains(s, pat) }
	}
	return p.Match
}

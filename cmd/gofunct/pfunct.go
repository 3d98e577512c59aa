package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/loader"
)

// pfunctFlags are pfunct's options beyond the listings' own.
type pfunctFlags struct {
	verbose   bool
	variables bool
	nrVars    bool
	labels    bool
	nameLen   bool
	total     bool
	expand    bool
	compile   string // "" none, "*" all, else a function
	symtab    string
	all       bool   // --all: every function's prototype
	format    string // -F: "dwarf" (the default) or "btf"
}

func addPfunctFlags(cmd *cobra.Command, p *pfunctFlags) {
	fl := cmd.Flags()
	fl.BoolVarP(&p.verbose, "verbose", "V", false, "show each function's prototype, size and where it was inlined (with -T its variables)")
	fl.BoolVarP(&p.variables, "variables", "T", false, "with -V, show the variables each function's body declares")
	fl.BoolVarP(&p.nrVars, "nr_variables", "S", false, "show the name and number of variables of each function that declares some")
	fl.BoolVarP(&p.labels, "goto_labels", "g", false, "show the name and number of goto labels of each function that has some")
	fl.BoolVarP(&p.nameLen, "function_name_len", "N", false, "show the name and its length of each function")
	fl.BoolVarP(&p.total, "total_inline_stats", "t", false, "show, per function inlined somewhere, its expansions' total and average size")
	fl.BoolVarP(&p.expand, "expand_types", "b", false, "show the C types the prototypes need, then the prototypes")
	fl.StringVar(&p.compile, "compile", "", "show compilable C: the types, then each function (or just FUNCTION) with a body")
	fl.Lookup("compile").NoOptDefVal = "*"
	fl.StringVar(&p.symtab, "symtab", "", "show the functions of the symbol table NAME (.symtab, .dynsym) with index, address and size")
	fl.Lookup("symtab").NoOptDefVal = ".symtab"
	fl.BoolVarP(&p.all, "all", "A", false, "show every function's prototype, as -P (pfunct --all)")
	fl.StringVarP(&p.format, "format_path", "F", "dwarf", "read the functions from `FORMAT`: dwarf, or btf (the .BTF section or a raw BTF file: names, prototypes with decl tags)")
}

// any reports whether one of pfunct's own views is asked for.
func (p *pfunctFlags) any() bool {
	return p.verbose || p.nrVars || p.labels || p.nameLen || p.total || p.expand || p.compile != ""
}

// params reports whether the view asked spells parameters.
func (p *pfunctFlags) params() bool { return p.verbose || p.expand || p.compile != "" }

func (p *pfunctFlags) stubFlag() string {
	if p.compile != "" {
		return "--compile"
	}
	return "-b"
}

// run prints the view asked of the functions l picks.
func (p *pfunctFlags) run(w io.Writer, c *loader.Code, l *funcview.Listing, path string) error {
	if p.compile != "" && p.compile != "*" {
		l.Names = append(l.Names, strings.Split(p.compile, ",")...)
	}
	picked := funcview.Pick(c.Model, l)
	switch {
	case p.total:
		return funcview.WriteTotalInlineStats(w, picked)
	case p.nameLen:
		return funcview.WriteNameLengths(w, picked)
	case p.expand || p.compile != "":
		return codegen.WriteStubs(w, picked, &codegen.StubOptions{Bodies: p.compile != "",
			Header: codegen.HeaderOptions{Source: path, BuildID: loader.BuildID(path), Generator: "gofunct " + p.stubFlag()}})
	}
	if c.DWARF == nil {
		return loader.NeedDWARF(path, "-V, -S and -g")
	}
	scopes, err := c.DWARF.Scopes()
	if err != nil {
		return err
	}
	switch {
	case p.nrVars:
		return funcview.WriteScopeCounts(w, scopes, false)
	case p.labels:
		return funcview.WriteScopeCounts(w, scopes, true)
	}
	if !p.variables {
		scopes = nil
	}
	return funcview.WriteVerbose(w, picked, scopes)
}

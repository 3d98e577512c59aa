package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/cmd/internal/oneshot"
	"github.com/binscope/binscope/cmd/internal/progress"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/varsview"
)

// gofunct runs gofunct with args (without the program name) and returns
// the exit status.
func gofunct(args []string, stdout, stderr io.Writer) int {
	return command.Execute(gofunctCommand(stdout, stderr), args, stdout, stderr)
}

type functFlags struct {
	names      []string
	prototypes bool
	locations  bool
	inline     bool
	stats      bool
	ccInlined  bool
	ccNotInl   bool
	sizes      bool
	nrParams   bool
	externals  bool
	class      string
	addr       string
	lines      string
	vars       string
	json       bool
	noCache    bool
	cacheLog   bool
	pf         pfunctFlags
}

func gofunctCommand(stdout, stderr io.Writer) *cobra.Command {
	var f functFlags
	cmd := &cobra.Command{
		Use:   "gofunct [flags] FILE",
		Short: "List the functions of Go, Rust, Zig, C and C++ binaries with prototypes, parameter locations, inline expansions and clones",
		Long: `gofunct lists the functions of an ELF binary from its DWARF, joined with the
symbol table: names as their language writes them, prototypes in that
language's syntax with where each parameter is at entry (register, stack slot;
Go floats in XMM registers are marked unreadable by uprobes), every place each
function was inlined (caller, entry address, ranges, call file, line and
column), the compiler clones cut from it (.part, .cold, .isra, .constprop),
the source lines of a function with their addresses (perf probe -L) and the
variables available at a line (perf probe -V). A Go binary stripped of DWARF
still lists its functions from .gopclntab.

The plain listings (alone or with -P, --locations, -E, -s) of a file with DWARF are kept
in an index cache ($BINSCOPE_CACHE/index, else ~/.cache/binscope/index,
keyed by the file's build-id, size and mtime and its debug file's): the next
run on the same file prints them without reading the DWARF. --no-cache
bypasses it; BINSCOPE_INDEX_CACHE=off turns it off, =DIR moves it.`,
		Example: `  gofunct ./app
  gofunct --locations -f 'main.(*acc).add' ./app
  gofunct --inline -f maybe_alloc ./prog
  gofunct -L main.work ./app
  gofunct --vars main.work:17 ./app
  gofunct -a 0x49e148 ./app
  gofunct --json ./prog`,
		Args: command.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFunct(&f, args[0], stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVarP(&f.names, "function", "f", nil, "show just these functions (repeatable, comma-separated)")
	fl.BoolVarP(&f.prototypes, "prototypes", "P", false, "show prototypes as pfunct -P prints them (C, C++), in the language's own syntax (Go, Rust, Zig)")
	fl.BoolVar(&f.locations, "locations", false, "show prototypes in the binary's own syntax with each parameter's location at entry")
	fl.BoolVarP(&f.inline, "inline", "i", false, "show every inline expansion of each function (pfunct -i)")
	fl.BoolVarP(&f.stats, "inline_stats", "I", false, "show, per function, the number and size of the expansions inlined into it")
	fl.BoolVarP(&f.ccInlined, "cc_inlined", "H", false, "show functions inlined though not declared inline (C, C++)")
	fl.BoolVarP(&f.ccNotInl, "cc_uninlined", "G", false, "show functions declared inline but not inlined (C, C++)")
	fl.BoolVarP(&f.sizes, "sizes", "s", false, "show name and size of each out-of-line function")
	fl.BoolVarP(&f.nrParams, "nr_params", "p", false, "show name and number of parameters of each function")
	fl.BoolVarP(&f.externals, "externals", "E", false, "show only external functions")
	fl.StringVarP(&f.class, "class", "c", "", "show functions taking a pointer to TYPE")
	fl.StringVarP(&f.addr, "addr", "a", "", "show the function and the inline chain at address ADDR")
	fl.StringVarP(&f.lines, "lines", "L", "", "show the source lines of FUNC with the addresses that carry them (perf probe -L)")
	fl.StringVar(&f.vars, "vars", "", "show the variables available at FUNC, FUNC:LINE or FUNC:+OFFSET with their locations (perf probe -V)")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per function, with parameters and locations")
	fl.BoolVar(&f.noCache, "no-cache", false, "read the binary even when the index cache holds its listing (also: "+cache.Env+"=off)")
	fl.BoolVarP(&f.cacheLog, "cache_log", "v", false, "say on stderr whether the listing came from the index cache, and why an entry was not used")
	addPfunctFlags(cmd, &f.pf)
	command.AddCompletion(cmd)
	command.AddDebugInfo(cmd)
	return cmd
}

// listing is what the flags ask a listing to show.
func (f *functFlags) listing() *funcview.Listing {
	l := &funcview.Listing{Names: command.SplitList(f.names), Externals: f.externals, Class: f.class,
		CCInlined: f.ccInlined, CCUninlined: f.ccNotInl}
	switch {
	case f.json:
		l.Show = funcview.ShowJSON
	case f.locations:
		l.Show = funcview.ShowLocations
	case f.prototypes:
		l.Show = funcview.ShowPrototypes
	case f.sizes:
		l.Show = funcview.ShowSizes
	case f.nrParams:
		l.Show = funcview.ShowNrParams
	case f.inline:
		l.Show = funcview.ShowInline
	}
	return l
}

func runFunct(f *functFlags, path string, stdout, stderr io.Writer) error {
	if f.pf.symtab != "" {
		return funcview.WriteSymtabFile(stdout, path, f.pf.symtab)
	}
	if f.pf.all {
		f.prototypes = true
	}
	switch f.pf.format {
	case "btf":
		return listBTF(f, path, stdout)
	case "dwarf", "":
	default:
		return usage.Errorf("-F %s: the formats are dwarf and btf", f.pf.format)
	}
	params := f.prototypes || f.locations || f.json || f.nrParams || f.class != "" || f.vars != "" || f.pf.params()
	l := f.listing()
	lc := f.listCache(path, l, stderr)
	if lc != nil && lc.Write(stdout, l) {
		return nil
	}
	oneshot.HugeHeap(path)
	stop := progress.Start(stderr, "gofunct", path)
	info := loader.DWARFInfoSize(path)
	large := info >= loader.LargeDWARF
	if large {
		// What the run holds is the functions, not the garbage of
		// reading them: the heap may grow to twice that, not five
		// times, and no further than about three times the
		// .debug_info (ceph-osd: 363 MB of it, 1.0 GB held at most).
		oneshot.Bounded(100)
		oneshot.Limit(3*info + 128<<20)
	}
	c, err := loader.OpenCode(path, &loader.CodeOptions{Params: params, SpelledParams: f.vars == "" && !f.pf.expand && f.pf.compile == "", Names: l.Names, Log: stderr,
		MapSections: large})
	stop()
	if err != nil {
		return err
	}
	defer c.Close()
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if lc != nil && c.DWARF != nil && c.DWARF.Damage() == nil {
		// A plain listing (the only kind with an entry): printed from
		// the rows the entry holds.
		lc.StoreWrite(w, c.Funcs(), l)
		return nil
	}
	err = listCode(w, f, c, l, path)
	if err == nil && c.DWARF != nil {
		// What the listing left out of a damaged file, after it.
		err = c.DWARF.Damage()
	}
	return err
}

// listCode writes the view of c the flags ask for.
func listCode(w io.Writer, f *functFlags, c *loader.Code, l *funcview.Listing, path string) error {
	switch {
	case f.addr != "":
		addr, err := strconv.ParseUint(strings.TrimSpace(f.addr), 0, 64)
		if err != nil {
			return fmt.Errorf("-a %s: not an address (write 0x49e148 or 4841800)", f.addr)
		}
		return funcview.WriteAddr(w, c.Model, addr)
	case f.lines != "" && c.DWARF == nil:
		return loader.NeedDWARF(path, "-L")
	case f.lines != "":
		return funcview.WriteFuncLines(w, c.Model, c.DWARF, f.lines)
	case f.vars != "" && c.DWARF == nil:
		return loader.NeedDWARF(path, "--vars")
	case f.vars != "":
		return varsview.WriteVarsAt(w, c.Model, c.DWARF, f.vars)
	case f.stats:
		funcview.WriteInlineStats(w, c.Funcs())
		return nil
	case f.pf.any():
		return f.pf.run(w, c, l, path)
	}
	if c.DWARF == nil && !c.Ref {
		flag := "-P"
		if f.locations {
			flag = "--locations"
		}
		l.NoParams = func() error { return loader.NeedDWARF(path, flag) }
	}
	return funcview.List(w, c.Model, l)
}

// listCache is the index cache entry of a plain listing (nil for the
// other views, or with --no-cache).
func (f *functFlags) listCache(path string, l *funcview.Listing, stderr io.Writer) *funcview.ListCache {
	if f.noCache || f.stats || f.addr != "" || f.lines != "" || f.vars != "" || f.pf.any() {
		return nil
	}
	var log func(string)
	if f.cacheLog {
		log = func(msg string) { fmt.Fprintf(stderr, "gofunct: %s\n", msg) }
	}
	return funcview.OpenListCache(path, l, log)
}

// listBTF answers -F btf: the functions of path's BTF.
func listBTF(f *functFlags, path string, stdout io.Writer) error {
	l := f.listing()
	if f.pf.any() || f.stats || f.addr != "" || f.lines != "" || f.vars != "" || f.class != "" || f.ccInlined || f.ccNotInl {
		return usage.Errorf("-F btf: only the names, -P/--all, -p, -f and -E: BTF has no addresses, lines or variables")
	}
	fns, err := loader.FuncsBTF(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	return funcview.ListBTF(w, path, fns, l)
}

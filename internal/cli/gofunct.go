package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/funcs"
	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// Gofunct runs gofunct with args (without the program name) and returns
// the exit status.
func Gofunct(args []string, stdout, stderr io.Writer) int {
	return execute(gofunctCommand(stdout), args, stdout, stderr)
}

type functFlags struct {
	names      []string
	prototypes bool
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
	verbose    bool
}

func gofunctCommand(stdout io.Writer) *cobra.Command {
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

The plain listings (alone or with -P, -E, -s) of a file with DWARF are kept
in an index cache (os.UserCacheDir()/binscope/index, keyed by the file's
build-id, size and mtime and its debug file's): the next run on the same
file prints them without reading the DWARF. --no-cache bypasses it;
BINSCOPE_INDEX_CACHE=off turns it off, =DIR moves it.`,
		Example: `  gofunct ./app
  gofunct -P -f 'main.(*acc).add' ./app
  gofunct --inline -f maybe_alloc ./prog
  gofunct -L main.work ./app
  gofunct -V main.work:17 ./app
  gofunct -a 0x49e148 ./app
  gofunct --json ./prog`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFunct(&f, args[0], stdout, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVarP(&f.names, "function", "f", nil, "show just these functions (repeatable, comma-separated)")
	fl.BoolVarP(&f.prototypes, "prototypes", "P", false, "show prototypes in the binary's own syntax with each parameter's location at entry")
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
	fl.StringVarP(&f.vars, "vars", "V", "", "show the variables available at FUNC, FUNC:LINE or FUNC:+OFFSET with their locations (perf probe -V)")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per function, with parameters and locations")
	fl.BoolVar(&f.noCache, "no-cache", false, "read the binary even when the index cache holds its listing (also: "+cache.Env+"=off)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "say on stderr whether the listing came from the index cache, and why an entry was not used")
	addCompletion(cmd)
	return cmd
}

// functSource is where the functions came from: DWARF, or .gopclntab for a
// stripped Go binary (nil df).
type functSource struct {
	model *code.Model
	df    *dwarf.File // nil without DWARF
	fns   []*types.Func
	ref   bool // a Go binary without DWARF: parameters from a reference build
}

// loadFuncs reads the model of path's code: DWARF joined with the symbol
// tables, or, without debug info, .gopclntab or the symbol tables alone.
//
// names, with params, are the functions whose parameters a Go binary
// without DWARF gets from a reference build (goRefFuncs).
func loadFuncs(path string, params bool, names ...string) (*functSource, error) {
	m, err := code.Open(path, &code.Options{Params: params})
	if err != nil {
		return nil, err
	}
	if len(m.Funcs()) == 0 {
		m.Close()
		_, err := dwarf.Open(path, nil) // the error that says how to get debug info
		if err == nil {
			err = fmt.Errorf("%s: %w: no functions", path, types.ErrNotFound)
		}
		return nil, err
	}
	src := &functSource{model: m, df: m.DWARF, fns: m.Funcs()}
	if params && m.DWARF == nil {
		if src.ref, err = goRefFuncs(m, names); err != nil {
			m.Close()
			return nil, err
		}
	}
	return src, nil
}

func (s *functSource) Close() { s.model.Close() }

// needDWARF is the error for queries the symbol tables or .gopclntab
// cannot answer.
func needDWARF(path, what string) error {
	_, err := dwarf.Open(path, nil)
	if err == nil {
		err = fmt.Errorf("%s: %w", path, types.ErrNoDebugInfo)
	}
	return fmt.Errorf("%s needs DWARF: %w", what, err)
}

func runFunct(f *functFlags, path string, stdout, stderr io.Writer) error {
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	lc := openListCache(f, path, stderr)
	if lc != nil {
		if rows, ok := lc.load(); ok {
			writeRows(w, f, rows)
			return nil
		}
	}
	params := f.prototypes || f.json || f.nrParams || f.class != "" || f.vars != ""
	src, err := loadFuncs(path, params, splitList(f.names)...)
	if err != nil {
		return err
	}
	defer src.Close()
	fns := src.fns
	if lc != nil && src.df != nil {
		lc.store(fns)
	}
	switch {
	case f.addr != "":
		return writeAddr(w, path, src.model, f.addr)
	case f.lines != "":
		if src.df == nil {
			return needDWARF(path, "-L")
		}
		fn, err := findFunc(path, src.model, f.lines)
		if err != nil {
			return err
		}
		rows, err := src.df.Lines(fn)
		if err != nil {
			return err
		}
		return funcs.WriteLines(w, fn, rows, funcs.InlinedInto(fns, fn.Name))
	case f.vars != "":
		if src.df == nil {
			return needDWARF(path, "-V")
		}
		return writeVars(w, path, src.df, src.model, f.vars)
	case f.stats:
		for _, s := range funcs.InlineStats(fns) {
			fmt.Fprintf(w, "%s: %d %d\n", s.Caller, s.Expansions, s.Bytes)
		}
		return nil
	}
	var want map[*types.Func]bool
	if names := splitList(f.names); len(names) > 0 {
		want = map[*types.Func]bool{}
		for _, n := range names {
			for _, fn := range src.model.Lookup(n) {
				want[fn] = true
			}
		}
	}
	var picked []*types.Func
	for _, fn := range fns {
		if want != nil && !want[fn] {
			continue
		}
		if f.externals && !fn.External {
			continue
		}
		// Prototypes, parameter counts and types need debug info.
		if fn.SymbolOnly && src.df != nil && (f.prototypes || f.nrParams || f.class != "") {
			continue
		}
		if f.class != "" && !funcs.TakesPointerTo(fn, f.class) {
			continue
		}
		if (f.ccInlined || f.ccNotInl) && !funcs.HasInlineDecl(fn) {
			continue
		}
		if f.ccInlined && (fn.DeclaredInline || len(fn.Inlined) == 0) {
			continue
		}
		if f.ccNotInl && (!fn.DeclaredInline || fn.LowPC == 0) {
			continue
		}
		picked = append(picked, fn)
	}
	if want != nil && len(picked) == 0 {
		return fmt.Errorf("%s: no function named %s%s", path, splitList(f.names)[0], closestFuncs(src.model, splitList(f.names)[0]))
	}
	if f.json {
		return writeFuncsJSON(w, picked)
	}
	for _, fn := range picked {
		switch {
		case f.prototypes:
			if src.df == nil && !src.ref {
				return needDWARF(path, "-P")
			}
			fmt.Fprintln(w, protoLine(fn))
		case f.sizes:
			if fn.LowPC != 0 {
				fmt.Fprintf(w, "%s: %d\n", fn.Name, fn.Size)
			}
		case f.nrParams:
			n := 0
			for _, p := range fn.Params {
				if !p.Result {
					n++
				}
			}
			fmt.Fprintf(w, "%s: %d\n", fn.Name, n)
		case f.inline:
			if len(fn.Inlined) == 0 && len(fn.Clones) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s: %d inline expansions\n", fn.Name, len(fn.Inlined))
			for _, s := range fn.Inlined {
				fmt.Fprintf(w, "\tin %s at %s:%d:%d entry %#x", s.Caller, s.CallFile, s.CallLine, s.CallColumn, s.EntryPC)
				for _, r := range s.Ranges {
					fmt.Fprintf(w, " [%#x,%#x)", r[0], r[1])
				}
				fmt.Fprintln(w)
			}
			for _, c := range fn.Clones {
				fmt.Fprintf(w, "\tclone %s (%s) at %#x size %d\n", c.Symbol, c.Kind, c.Address, c.Size)
			}
		default:
			fmt.Fprintln(w, fn.Name)
		}
	}
	return nil
}

// protoLine is fn's line in gofunct -P: its prototype and where each
// parameter is at entry.
func protoLine(fn *types.Func) string {
	p := funcs.Prototype(fn)
	if l := funcs.Locations(fn); l != "" && fn.LowPC != 0 {
		p += commentFor(fn.Lang, l)
	}
	return p
}

// commentFor puts the parameter locations after a prototype as a comment
// of fn's language.
func commentFor(l types.Lang, s string) string {
	if l == types.LangC || l == types.LangCPlusPlus || l == types.LangUnknown {
		return " /* " + s + " */"
	}
	return " // " + s
}

// findFunc finds the out-of-line function called name (by any name the
// model of code knows), or says which names are close.
func findFunc(path string, m *code.Model, name string) (*types.Func, error) {
	var inlineOnly *types.Func
	for _, fn := range m.Lookup(name) {
		if fn.LowPC != 0 {
			return fn, nil
		}
		inlineOnly = fn
	}
	if inlineOnly != nil {
		if len(inlineOnly.Clones) > 0 {
			return nil, fmt.Errorf("%s: %s exists only as clones (%s): list them with --inline -f '%s'", path, name, inlineOnly.Clones[0].Symbol, name)
		}
		return nil, fmt.Errorf("%s: %s exists only inlined (%d sites): list them with --inline -f '%s'", path, name, len(inlineOnly.Inlined), name)
	}
	return nil, fmt.Errorf("%s: no function named %s%s", path, name, closestFuncs(m, name))
}

// closestFuncs names up to three functions whose names are closest to
// name, for error messages.
func closestFuncs(m *code.Model, name string) string {
	near := types.Closest(m.Names(), name, 3)
	if len(near) == 0 {
		return ""
	}
	return " (closest: " + strings.Join(near, ", ") + ")"
}

func parseAddr(s string) (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(s), 0, 64)
}

// writeAddr answers -a ADDR: the function holding the address with the
// offset and the line there, then each inline expansion holding it,
// outermost first, with its call site, entry and the line there.
func writeAddr(w io.Writer, path string, m *code.Model, arg string) error {
	addr, err := parseAddr(arg)
	if err != nil {
		return fmt.Errorf("-a %s: not an address (write 0x49e148 or 4841800)", arg)
	}
	frames := m.At(addr)
	if len(frames) == 0 {
		return fmt.Errorf("%s: %w: no function covers address %#x", path, types.ErrNotFound, addr)
	}
	outer := frames[len(frames)-1]
	fn := outer.Func
	off := fmt.Sprintf("+%#x", addr-fn.LowPC)
	if addr < fn.LowPC {
		off = fmt.Sprintf("-%#x", fn.LowPC-addr)
	}
	fmt.Fprintf(w, "%s%s (%#x) %s\n", fn.Name, off, addr, fileLine(outer.File, outer.Line))
	exp := m.Expansions(addr)
	for i := len(exp) - 1; i >= 0; i-- {
		s, fr := exp[i], frames[i]
		fmt.Fprintf(w, "%s inlined %s at %s:%d:%d entry %#x, at %s\n", strings.Repeat("  ", len(exp)-i), fr.Name,
			s.CallFile, s.CallLine, s.CallColumn, s.EntryPC, fileLine(fr.File, fr.Line))
	}
	for _, s := range m.Entering(addr) {
		fmt.Fprintf(w, "%s inlined %s at %s:%d:%d entry %#x begins here (no code of it at this address yet)\n",
			strings.Repeat("  ", len(exp)+1), s.Callee.Name, s.CallFile, s.CallLine, s.CallColumn, s.EntryPC)
	}
	return nil
}

func fileLine(file string, line int) string {
	if file == "" {
		return "??:?"
	}
	if line == 0 {
		return file + ":?"
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// writeVars answers -V FUNC[:LINE|:+OFFSET].
func writeVars(w io.Writer, path string, df *dwarf.File, m *code.Model, arg string) error {
	name, line, rel := arg, 0, false
	if i := strings.LastIndexByte(arg, ':'); i > 0 && !strings.HasSuffix(arg[:i], ":") {
		spec := arg[i+1:]
		rel = strings.HasPrefix(spec, "+")
		n, err := strconv.Atoi(strings.TrimPrefix(spec, "+"))
		if err == nil {
			name, line = arg[:i], n
		}
	}
	fn, err := findFunc(path, m, name)
	if err != nil {
		return err
	}
	// At the entry of unoptimised code the frame slots are not filled
	// yet: perf probe -V FUNC looks after the prologue too.
	pc := df.PrologueEnd(fn)
	if fn.LowPC != 0 && !framed(fn) {
		pc = fn.LowPC
	}
	where := fn.Name
	if line != 0 || rel {
		rows, err := df.Lines(fn)
		if err != nil {
			return err
		}
		file, lines := funcs.SourceLines(fn, rows, funcs.InlinedInto(m.Funcs(), fn.Name))
		if rel {
			line += fn.Decl.Line
		}
		pc = 0
		var have []string
		for _, l := range lines {
			addrs := append([]uint64{}, l.Addrs...)
			for _, in := range l.Inlines {
				addrs = append(addrs, in.Site.EntryPC)
			}
			if len(addrs) > 0 {
				have = append(have, strconv.Itoa(l.Line))
			}
			if l.Line == line && len(addrs) > 0 {
				sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
				pc = addrs[0]
			}
		}
		if pc == 0 {
			return fmt.Errorf("%s: %w: line %d of %s has no code in %s (lines with code: %s)", path, types.ErrNotFound, line, file, fn.Name, strings.Join(have, " "))
		}
		where = fmt.Sprintf("%s:%d", fn.Name, line)
	}
	vars, err := df.VarsAt(pc)
	if err != nil {
		return err
	}
	return funcs.WriteVars(w, fn, where, pc, vars)
}

// framed reports whether one of fn's parameters lives in a frame slot that
// the prologue fills.
func framed(fn *types.Func) bool {
	for _, p := range fn.Params {
		if p.PC > fn.LowPC {
			return true
		}
	}
	return false
}

type funcJSON struct {
	Name        string        `json:"name"`
	LinkageName string        `json:"linkage_name,omitempty"`
	Lang        string        `json:"lang"`
	LowPC       uint64        `json:"low_pc"`
	Size        uint64        `json:"size"`
	File        string        `json:"file,omitempty"`
	Line        int           `json:"line,omitempty"`
	External    bool          `json:"external"`
	SymbolOnly  bool          `json:"symbol_only,omitempty"`
	Prototype   string        `json:"prototype,omitempty"`
	Params      []paramJSON   `json:"params"`
	InlineSites []siteJSON    `json:"inline_sites"`
	Clones      []types.Clone `json:"clones"`
}

type paramJSON struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Result   bool   `json:"result,omitempty"`
	Location string `json:"location,omitempty"`
	// PC is where the location holds: the entry, or after the prologue.
	PC       uint64 `json:"pc,omitempty"`
	Readable bool   `json:"readable"`
}

type siteJSON struct {
	Caller     string      `json:"caller"`
	EntryPC    uint64      `json:"entry_pc"`
	Ranges     [][2]uint64 `json:"ranges"`
	CallFile   string      `json:"call_file"`
	CallLine   int         `json:"call_line"`
	CallColumn int         `json:"call_column"`
}

func writeFuncsJSON(w io.Writer, fns []*types.Func) error {
	out := make([]funcJSON, 0, len(fns))
	for _, fn := range fns {
		j := funcJSON{Name: fn.Name, LinkageName: fn.Linkage, Lang: fn.Lang.String(), LowPC: fn.LowPC, Size: fn.Size,
			File: fn.Decl.File, Line: fn.Decl.Line, External: fn.External, SymbolOnly: fn.SymbolOnly,
			Params: []paramJSON{}, InlineSites: []siteJSON{}, Clones: fn.Clones}
		if j.Clones == nil {
			j.Clones = []types.Clone{}
		}
		if len(fn.Params) > 0 || fn.Return != nil {
			j.Prototype = funcs.Prototype(fn)
		}
		for _, p := range fn.Params {
			pj := paramJSON{Name: p.Name, Type: layout.TypeString(p.Type, fn.Lang), Result: p.Result}
			if !p.Result && fn.LowPC != 0 {
				pj.Location, pj.Readable, pj.PC = p.Loc.String(), p.Loc.Readable(), p.PC
			}
			j.Params = append(j.Params, pj)
		}
		for _, s := range fn.Inlined {
			j.InlineSites = append(j.InlineSites, siteJSON{Caller: s.Caller, EntryPC: s.EntryPC, Ranges: s.Ranges,
				CallFile: s.CallFile, CallLine: s.CallLine, CallColumn: s.CallColumn})
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// Package code is the model of a binary's code, as package types is the
// model of its data: every function with its instances (the out-of-line
// copy with its true entry, full clones, continuations such as .cold and
// .part pieces), its inline expansions in a tree that follows DIE nesting,
// the line at an address, and one symbol table with one naming policy.
// It is read once per file from every source the file has (DWARF, .symtab
// and .dynsym, .gopclntab) and every view asks it: gofunct's listings,
// goprobe's resolution, the stack symbolizer and goref's functions of
// stripped Go binaries.
package code

import (
	"errors"
	"sort"
	"sync"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// Frame is one frame of the inline chain at an address.
type Frame struct {
	// Func is the function whose code this frame runs; Name is its name
	// as the language writes it.
	Func *types.Func
	Name string
	// File, Line and Column locate the frame: for the innermost frame the
	// line table's row at the address, for an outer frame the call site of
	// the expansion it holds. Line is 0 when unknown.
	File   string
	Line   int
	Column int
	// Inline marks a frame that is an inline expansion (every frame but
	// the outermost).
	Inline bool
}

// Options tune Open and New. A nil *Options means the defaults.
type Options struct {
	// Params fills each function's parameters and their locations;
	// with DeferParams, only when Model.FillParams asks for a function.
	Params      bool
	DeferParams bool
	// SpelledParams, with Params, is for a caller that only spells the
	// parameters' types (see dwarf.FuncOptions.SpelledParams).
	SpelledParams bool
	// At, when not zero, reads only the DWARF that can hold the function
	// entered at At and its inline expansions (dwarf.FuncOptions.At).
	At uint64
	// Syms, when not nil, are the file's symbol tables as Symbols reads
	// them, which the caller has read already.
	Syms *symtab.Table
	// MapSections, for Open, reads compressed DWARF inflated into the
	// index cache and mapped (dwarf.Options.MapSections).
	MapSections bool
	// Traceback, for Open, reads what Model.Traceback needs of a Go
	// binary (its wrappers), for a caller that closes the file before
	// asking.
	Traceback bool
}

// Model is the code of one ELF file.
type Model struct {
	Path  string
	ELF   *elfx.File
	DWARF *dwarf.File // nil for a file without debug info
	Syms  *symtab.Table

	funcs    []*types.Func
	hosts    []host
	byName   map[string][]*types.Func // names, linkage names, aliases (see indexNames)
	short    map[string][]*types.Func // names without template arguments
	nameOnce sync.Once
	owned    bool       // Close closes the files
	marks    marks      // Go's inline marks (see InlineMark)
	wraps    goWrappers // Go's wrappers (see Traceback)
	// pcln is the Go table the model was read from (no DWARF), which
	// also answers lines; nil otherwise.
	pcln *pcln.Table
}

// GoStructs are the layouts of the named struct types the runtime type
// descriptors of a Go binary read from .gopclntab record (pcln.Structs),
// goVersion being its Go version; pcln.ErrNoTypes when the model was not
// read from .gopclntab or the format is not read.
func (m *Model) GoStructs(goVersion string) (map[string][]pcln.Field, error) {
	if m.pcln == nil || m.ELF == nil {
		return nil, pcln.ErrNoTypes
	}
	return m.pcln.Structs(m.ELF, goVersion)
}

// host is one address range of code: a range of an instance (the
// out-of-line copy, a clone or a piece) or of a symbol without DWARF.
type host struct {
	lo, hi uint64
	fn     *types.Func
	inst   *types.Instance // nil for code only a symbol names
}

// Open reads the code of the ELF file at path: with its DWARF when the
// file or a separate debug file has it, else from .gopclntab or the symbol
// tables.
func Open(path string, opts *Options) (*Model, error) {
	var dopts *dwarf.Options
	if opts != nil && opts.MapSections {
		dopts = &dwarf.Options{SavedSections: true, MapSections: true}
	}
	df, err := dwarf.Open(path, dopts)
	if err == nil {
		m, err := New(df, opts)
		if err != nil {
			df.Close()
			return nil, err
		}
		m.owned = true
		m.opened(opts)
		return m, nil
	}
	if !errors.Is(err, types.ErrNoDebugInfo) {
		return nil, err
	}
	ef, oerr := elfx.Open(path)
	if oerr != nil {
		return nil, oerr
	}
	m, err := NewFromELF(ef)
	if err != nil {
		ef.Close()
		return nil, err
	}
	m.owned = true
	m.opened(opts)
	return m, nil
}

// opened reads at Open what opts ask to have before the file closes.
func (m *Model) opened(opts *Options) {
	if opts != nil && opts.Traceback {
		m.wrappers()
	}
}

// New builds the model of df's code: its DWARF functions joined with the
// symbol tables of the file and of its debug file.
func New(df *dwarf.File, opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Params && !o.DeferParams {
		df.IndexTypes() // on the other core, while the walk runs
		df.Prefetch(".debug_loclists", ".debug_loc")
	}
	syms := o.Syms
	if syms == nil {
		syms = Symbols(df)
	}
	// Parameters are filled once settle has found each function's entry
	// copy: their locations are the entry's (see dwarf.File.FillAllParams).
	fns, err := df.Functions(&dwarf.FuncOptions{Params: o.Params, DeferParams: o.Params, SpelledParams: o.SpelledParams, At: o.At})
	if err != nil {
		return nil, err
	}
	m := &Model{Path: df.Path, ELF: df.ELF, DWARF: df, Syms: syms}
	m.settle(fns)
	if o.Params && !o.DeferParams {
		if err := df.FillAllParams(fns); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(m.hosts, func(i, j int) bool { return m.hosts[i].lo < m.hosts[j].lo })
	if o.At == 0 {
		m.addSymbolFuncs(nil)
	}
	m.index()
	return m, nil
}

// NewFromELF builds the model of a file without debug info: a Go binary's
// .gopclntab, else its symbol tables.
func NewFromELF(ef *elfx.File) (*Model, error) {
	m := &Model{Path: ef.Path, ELF: ef, Syms: readSyms(ef, nil)}
	var fns []*types.Func
	if t, err := openPcln(ef); err != nil {
		return nil, err
	} else if t != nil {
		if fns, err = t.Functions(ef.Path); err != nil {
			return nil, err
		}
		fns, m.wraps.inlined = pclnInlines(ef, t, fns)
		m.pcln = t
		for _, fn := range fns {
			if fn.Size > 0 {
				var inst *types.Instance
				if len(fn.Instances) > 0 {
					inst = fn.Instances[0]
				}
				m.hosts = append(m.hosts, host{lo: fn.LowPC, hi: fn.LowPC + fn.Size, fn: fn, inst: inst})
			}
		}
		sort.SliceStable(m.hosts, func(i, j int) bool { return m.hosts[i].lo < m.hosts[j].lo })
	}
	m.funcs = fns
	m.addSymbolFuncs(fns)
	m.index()
	return m, nil
}

// openPcln opens ef's Go function table; nil, and no error, for a file
// without one (symbols then name its code).
func openPcln(ef *elfx.File) (*pcln.Table, error) {
	if !pcln.Has(ef) {
		return nil, nil
	}
	t, err := pcln.Open(ef)
	if errors.Is(err, pcln.ErrNoTable) {
		return nil, nil
	}
	return t, err
}

// Symbols reads the symbol tables of df's file and of its debug file, as
// New does.
func Symbols(df *dwarf.File) *symtab.Table { return readSyms(df.ELF, df.Debug) }

func readSyms(ef, debug *elfx.File) *symtab.Table {
	if debug == ef {
		debug = nil
	}
	return symtab.Read(ef, debug)
}

// Close releases the files the model opened.
func (m *Model) Close() error {
	if !m.owned {
		return nil
	}
	if m.DWARF != nil {
		return m.DWARF.Close()
	}
	return m.ELF.Close()
}

// Funcs is every function of the file: functions with DWARF in address
// order, then those that exist only inlined or cloned, then the code only
// symbols name.
func (m *Model) Funcs() []*types.Func { return m.funcs }

// FillParams fills the parameters of fn, a function of this model or of
// another model of the same DWARF, when its model was opened with
// Options.DeferParams (see dwarf.File.FillParams), whenever it is called.
// It does nothing for a function whose parameters are filled already, for
// code only a symbol names, and without DWARF; it returns an error wrapping
// types.ErrNotFound for a function of a model opened without
// Options.Params.
func (m *Model) FillParams(fn *types.Func) error {
	if m.DWARF == nil {
		return nil
	}
	return m.DWARF.FillParams(fn)
}

// Lookup finds the functions a user's name denotes: the name as any
// output prints it (demangled with or without template arguments, a
// linkage name, a symbol alias, a symbol with its version).
func (m *Model) Lookup(name string) []*types.Func {
	m.nameOnce.Do(m.indexNames)
	if fs := m.byName[name]; len(fs) > 0 {
		return fs
	}
	if n := naming.StripVersion(name); n != name {
		if fs := m.byName[n]; len(fs) > 0 {
			return fs
		}
	}
	if d, ok := naming.Demangle(name); ok {
		if fs := m.byName[d]; len(fs) > 0 {
			return fs
		}
	}
	return m.short[naming.StripTemplates(name)]
}

// Names are every name Lookup knows, for suggestions.
func (m *Model) Names() []string {
	m.nameOnce.Do(m.indexNames)
	out := make([]string, 0, len(m.byName))
	for n := range m.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (m *Model) index() {
	sort.SliceStable(m.hosts, func(i, j int) bool { return m.hosts[i].lo < m.hosts[j].lo })
}

// indexNames indexes every function by every name Lookup knows, on the
// first lookup: a listing of every function looks up none.
func (m *Model) indexNames() {
	m.byName, m.short = make(map[string][]*types.Func, 2*len(m.funcs)), make(map[string][]*types.Func, len(m.funcs))
	add := func(to map[string][]*types.Func, name string, fn *types.Func) {
		if name == "" {
			return
		}
		for _, have := range to[name] {
			if have == fn {
				return
			}
		}
		to[name] = append(to[name], fn)
	}
	// A Go function owns its name; its assembly-ABI wrapper (linkage
	// name NAME.abi0) is found by that linkage name.
	goOwned := map[string]bool{}
	for _, fn := range m.funcs {
		if fn.Lang == types.LangGo && !isABI0(fn) {
			goOwned[fn.Name] = true
		}
	}
	for _, fn := range m.funcs {
		if isABI0(fn) && goOwned[fn.Name] {
			continue
		}
		add(m.byName, fn.Name, fn)
	}
	// Then other spellings, after every function's own name.
	for _, fn := range m.funcs {
		add(m.byName, fn.Linkage, fn)
		for _, a := range fn.Aliases {
			add(m.byName, a, fn)
		}
		add(m.short, naming.StripTemplates(fn.Name), fn)
		// Code only a clone's symbol names (an LTO-private copy):
		// findable by the function's name too.
		if fn.Linkage != "" && len(fn.Instances) == 0 && makesClones(fn.Lang) {
			if base, kind, ok := naming.Clone(fn.Linkage); ok && !naming.ContinuesCall(kind) {
				add(m.short, naming.Display(base), fn)
			}
		}
		// A clone's symbol as perf, bpftrace and nm print it
		// (f.constprop.0, and demangled: real::scale_by.constprop.0)
		// names the function it was cloned from.
		for _, c := range fn.Clones {
			add(m.byName, c.Symbol, fn)
			if base, _, ok := naming.Clone(c.Symbol); ok {
				if d, ok := naming.Demangle(base); ok {
					add(m.byName, d+c.Symbol[len(base):], fn)
				}
			}
		}
	}
}

// isABI0 reports whether fn is Go code whose symbol is NAME.abi0.
func isABI0(fn *types.Func) bool {
	return fn.Lang == types.LangGo && fn.Linkage == fn.Name+".abi0"
}

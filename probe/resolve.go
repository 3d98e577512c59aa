package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/usdt"
)

// Resolver resolves definitions against one binary's model of code.
type Resolver struct {
	f        *dwarf.File // nil: symbols only (no debug info)
	ef       *elfx.File
	path     string
	model    *code.Model // every function; nil until read (see all)
	syms     *symtab.Table
	arch     *arch.Arch
	rows     []cfi.Row // call frame rows (see frameRows)
	rowsRead bool
	frames   *cfi.Frames // the call frame information whole (see savedSlot)
	// near is the model of the units the quick lookup read; the rest
	// is placement's: each instance's control flow, the instance holding
	// each inline expansion, and which units GCC compiled.
	near      *code.Model
	flows     map[*types.Instance]*flow
	hosts     map[*types.InlineSite]*types.Instance
	hostsOf   *code.Model
	producers map[uint64]bool
	group     uint32 // the last mark group given (see Mark)
	regABI    *bool  // the binary's Go code uses the register ABI; nil until asked (see goRegABI)
	// usdt are the file's USDT probes once read; usdtTable the
	// symbols that place them; closers what Close releases.
	usdt      []usdt.Probe
	usdtTable *symtab.Table
	closers   []func() error
	// globals are the unit-level variables looked up by name (see
	// global), by the address looked from and the name.
	globals map[globalKey]globalVar
}

// Close releases the files the resolver opened itself (a debug file for
// the symbols that hold USDT probes).
func (r *Resolver) Close() {
	for _, c := range r.closers {
		c()
	}
	r.closers = nil
}

// NewResolver resolves against f's DWARF. Functions are read as
// definitions need them: a definition that names a function by its symbol
// reads only the compile units that can hold it and its inline
// expansions; a source line, or a name no symbol carries, reads them all.
func NewResolver(f *dwarf.File) (*Resolver, error) {
	a, err := arch.ForMachine(f.ELF.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return &Resolver{f: f, ef: f.ELF, path: f.Path, arch: a}, nil
}

// all reads every function once (see NewResolver), the type index built
// meanwhile on another core. A quick lookup (see quick) builds the index
// only if the probe reads arguments: a count needs no type.
func (r *Resolver) all() error {
	if r.model != nil {
		return nil
	}
	r.f.IndexTypes()
	m, err := code.New(r.f, &code.Options{Params: true, DeferParams: true})
	if err != nil {
		return err
	}
	r.model = m
	return nil
}

// quick finds the function named name by its symbol, or by a symbol that
// demangles to name (a C++ method as users write it), reading only the
// units that concern it; nil when the name is not one symbol's, or when
// those units hold other functions of that name (overloads: the whole
// file decides).
func (r *Resolver) quick(name string) *types.Func {
	if r.syms == nil {
		r.syms = code.Symbols(r.f)
	}
	syms := r.syms.Named(naming.StripVersion(name))
	demangled := len(syms) == 0
	if demangled {
		syms = r.syms.Demangled(name)
	}
	if len(syms) == 0 {
		return nil
	}
	addr := syms[0].Addr
	for _, s := range syms[1:] {
		if s.Addr != addr {
			return nil // a static name in several units: read them all
		}
	}
	m, err := code.New(r.f, &code.Options{Params: true, DeferParams: true, At: addr, Syms: r.syms})
	if err != nil {
		return nil
	}
	for _, fn := range m.Funcs() {
		if fn.LowPC != addr {
			continue
		}
		if demangled && !onlyNamed(m, name, fn) {
			return nil
		}
		r.near = m
		return fn
	}
	return nil
}

// onlyNamed reports whether the functions with code m's lookup finds by
// name are fn alone (or fn's name several times: see sameName), as the
// whole model's lookup would choose it.
func onlyNamed(m *code.Model, name string, fn *types.Func) bool {
	var named []*types.Func
	has := false
	for _, o := range m.Lookup(name) {
		if o.LowPC != 0 || len(o.Inlined) > 0 || len(o.Clones) > 0 {
			named = append(named, o)
			has = has || o == fn
		}
	}
	return has && (len(named) == 1 || sameName(named))
}

// NewSymbolResolver resolves against a binary without debug info: its
// functions come from .gopclntab (Go) or the symbol table, and arguments
// can only be registers (%rdi) and $retval, by the calling convention.
func NewSymbolResolver(ef *elfx.File) (*Resolver, error) {
	a, err := arch.ForMachine(ef.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, err)
	}
	m, err := code.NewFromELF(ef)
	if err != nil {
		return nil, err
	}
	if len(m.Funcs()) == 0 {
		return nil, fmt.Errorf("%s: %w, no .gopclntab and no function symbols to probe by", ef.Path, types.ErrNoDebugInfo)
	}
	return &Resolver{ef: ef, path: ef.Path, arch: a, model: m}, nil
}

// NewUSDTResolver resolves USDT probes (usdt:PROVIDER:NAME) alone, from
// ef's notes and symbols: no function model is read.
func NewUSDTResolver(ef *elfx.File) (*Resolver, error) {
	a, err := arch.ForMachine(ef.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, err)
	}
	return &Resolver{ef: ef, path: ef.Path, arch: a}, nil
}

// varsAt is f.VarsAt, or nothing without debug info.
func (r *Resolver) varsAt(pc uint64) ([]types.Var, error) {
	if r.f == nil {
		return nil, nil
	}
	return r.f.VarsAt(pc)
}

// Spec resolves every definition with the default options (see SpecWith).
func (r *Resolver) Spec(defs []*Def) (*spec.Spec, error) { return r.SpecWith(defs, nil) }

// params fills fn's parameters, which the walk deferred: only the
// functions a definition names pay for their types.
func (r *Resolver) params(fn *types.Func) (*types.Func, error) {
	if r.f != nil && fn != nil {
		if err := r.f.FillParams(fn); err != nil {
			return nil, err
		}
	}
	return fn, nil
}

// lookup finds the function a definition names, by any name the model
// of code knows (demangled, linkage, alias, versioned symbol), or says
// which names are closest. Its parameters are not filled (see params).
func (r *Resolver) lookup(name string) (*types.Func, error) {
	if r.model == nil {
		if fn := r.quick(name); fn != nil {
			return fn, nil
		}
		if err := r.all(); err != nil {
			return nil, err
		}
	}
	fs := r.model.Lookup(name)
	var withCode []*types.Func
	for _, fn := range fs {
		if fn.LowPC != 0 || len(fn.Inlined) > 0 || len(fn.Clones) > 0 {
			withCode = append(withCode, fn)
		}
	}
	exact := 0
	for _, fn := range withCode {
		if fn.Name == name {
			exact++
		}
	}
	switch {
	case len(withCode) == 1:
		return withCode[0], nil
	case len(withCode) > 1 && sameName(withCode):
		return withCode[0], nil
	case exact == 1: // aliases the name also finds (__getpid for getpid)
		for _, fn := range withCode {
			if fn.Name == name {
				return fn, nil
			}
		}
	case len(withCode) > 1:
		var names []string
		for _, fn := range withCode {
			names = append(names, fn.Name)
		}
		if len(names) > 8 {
			names = append(names[:8], fmt.Sprintf("and %d more", len(withCode)-8))
		}
		return nil, fmt.Errorf("%s: %s names %d functions; name one: %s", r.path, name, len(withCode), strings.Join(names, "; "))
	case len(fs) > 0:
		return fs[0], nil
	}
	near := types.Closest(r.model.Names(), name, 3)
	if len(near) > 0 {
		return nil, fmt.Errorf("%s: %w: no function %s (closest: %s)", r.path, types.ErrNotFound, name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("%s: %w: no function %s", r.path, types.ErrNotFound, name)
}

// sameName reports whether fns are one function's name several times (a
// static function of several units): Resolve probes them all.
func sameName(fns []*types.Func) bool {
	for _, fn := range fns[1:] {
		if fn.Name != fns[0].Name {
			return false
		}
	}
	return true
}

// Resolve finds every site of d and the fetch programs of its arguments.
// A name that several functions print alike (a static function of several
// units; a Rust generic's instances, which legacy symbols name without
// their arguments) gets the sites of all of them.
func (r *Resolver) Resolve(d *Def) (*spec.Probe, error) {
	if d.USDT != nil {
		return r.resolveUSDT(d)
	}
	if d.File != "" {
		return r.resolveFileLine(d)
	}
	if d.Addr != 0 {
		return r.resolveAddr(d)
	}
	fn, err := r.lookup(d.Func)
	if err != nil {
		return nil, err
	}
	p, err := r.resolveFunc(d, fn)
	if err != nil {
		return nil, err
	}
	for _, other := range r.sameNamed(d.Func, fn) {
		q, err := r.resolveFunc(d, other)
		if err != nil {
			return nil, err
		}
		p.Sites = append(p.Sites, q.Sites...)
	}
	sortSites(p.Sites)
	return p, nil
}

// resolveAddr places a raw address probe: in the function whose code
// holds the address, where decoding it from its first byte proves an
// instruction starts (see offsetSite); the arguments are the variables
// there and registers.
func (r *Resolver) resolveAddr(d *Def) (*spec.Probe, error) {
	if err := r.all(); err != nil {
		return nil, err
	}
	fn := r.model.Func(d.Addr)
	if fn == nil || fn.LowPC == 0 || d.Addr < fn.LowPC || d.Addr-fn.LowPC >= fn.Size {
		return nil, fmt.Errorf("%s: %w: no function's code holds %#x in %s (gofunct -a ADDR says what is there)", d.Text, types.ErrNotFound, d.Addr, r.path)
	}
	at := *d
	at.Func, at.Offset = fn.Name, d.Addr-fn.LowPC
	return r.resolveFunc(&at, fn)
}

// global is the unit-level variable named name a probe at pc reads when
// no parameter or local of that name is in scope (see dwarf.File.Global).
func (r *Resolver) global(pc uint64, name string) (types.Var, bool) {
	if r.f == nil {
		return types.Var{}, false
	}
	k := globalKey{pc, name}
	if g, ok := r.globals[k]; ok {
		return g.v, g.ok
	}
	v, ok, err := r.f.Global(pc, name)
	if r.globals == nil {
		r.globals = map[globalKey]globalVar{}
	}
	r.globals[k] = globalVar{v, ok && err == nil}
	return v, ok && err == nil
}

type globalKey struct {
	pc   uint64
	name string
}

type globalVar struct {
	v  types.Var
	ok bool
}

// sameNamed are the functions other than fn with code that name denotes
// and that print as fn does. Never in Go, where the second function of a
// name is the ABI wrapper (runtime.mstart0.abi0) that calls the first.
func (r *Resolver) sameNamed(name string, fn *types.Func) []*types.Func {
	if r.model == nil || fn.Lang == types.LangGo {
		return nil
	}
	var out []*types.Func
	for _, o := range r.model.Lookup(name) {
		if o != fn && o.Name == fn.Name && (o.LowPC != 0 || len(o.Inlined) > 0 || len(o.Clones) > 0) {
			out = append(out, o)
		}
	}
	return out
}

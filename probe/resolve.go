package probe

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"

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
	// captures collects, while a %return probe is resolved, the chains
	// whose entry values its return sites read.
	captures []spec.Chain
	f        *dwarf.File // nil: symbols only (no debug info)
	ef       *elfx.File
	path     string
	model    *code.Model // every function; nil until read (see all)
	syms     *symtab.Table
	arch     *arch.Arch
	rows     []cfi.Row // call frame rows (see frameRows)
	rowsRead bool
	frames   *cfi.Frames // the call frame information whole (see savedSlot)
	// at is the address where the fetches being resolved run, which
	// expressions are lowered for (see lower): the site's, or for a
	// return site the function's entry, where its values are captured.
	at uint64
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
	f.IndexTypes()
	return &Resolver{f: f, ef: f.ELF, path: f.Path, arch: a}, nil
}

// all reads every function once (see NewResolver).
func (r *Resolver) all() error {
	if r.model != nil {
		return nil
	}
	m, err := code.New(r.f, &code.Options{Params: true, DeferParams: true})
	if err != nil {
		return err
	}
	r.model = m
	return nil
}

// quick finds the function named name by its symbol, reading only the
// units that concern it; nil when the name is not one symbol's.
func (r *Resolver) quick(name string) *types.Func {
	if r.syms == nil {
		r.syms = symtab.Read(r.f.ELF, r.f.Debug)
	}
	syms := r.syms.Named(naming.StripVersion(name))
	if len(syms) == 0 {
		return nil
	}
	addr := syms[0].Addr
	for _, s := range syms[1:] {
		if s.Addr != addr {
			return nil // a static name in several units: read them all
		}
	}
	m, err := code.New(r.f, &code.Options{Params: true, DeferParams: true, At: addr})
	if err != nil {
		return nil
	}
	for _, fn := range m.Funcs() {
		if fn.LowPC == addr {
			r.near = m
			return fn
		}
	}
	return nil
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
// instruction starts (see resolveFunc's FUNC+OFFSET); the arguments are
// the variables there and registers.
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

// resolveFunc finds the sites of d in fn.
func (r *Resolver) resolveFunc(d *Def, fn *types.Func) (*spec.Probe, error) {
	var err error
	// Parameters, and so the type index, only for a probe that reads
	// arguments or returns: a count needs neither.
	if len(d.Args) > 0 || d.Return {
		if fn, err = r.params(fn); err != nil {
			return nil, err
		}
	}
	args, err := r.expand(d, fn)
	if err != nil {
		return nil, err
	}
	// The variables at a site, for the arguments: a count reads none.
	varsAt := func(pc uint64) ([]types.Var, error) {
		if len(args) == 0 {
			return nil, nil
		}
		return r.varsAt(pc)
	}
	p := &spec.Probe{Def: d.Text, Function: fn.Name, Lang: fn.Lang.String()}
	add := func(kind, where string, addr uint64, vars []types.Var) error {
		off, err := r.ef.FileOffset(addr)
		if err != nil {
			return err
		}
		site := spec.Site{Kind: kind, Function: where, Addr: addr, FileOffset: off}
		r.at = fn.LowPC
		if kind != spec.SiteReturn {
			vars = r.inFrame(addr, vars)
			r.at = addr
		}
		if kind == spec.SiteEntry || kind == spec.SiteLine || kind == spec.SiteOffset {
			site.Guard = r.guard(fn, addr)
		}
		for _, a := range args {
			f, err := r.fetch(fn, a, vars, kind)
			if err != nil {
				return fmt.Errorf("%s: %w", d.Text, err)
			}
			for _, c := range f.Chains {
				if why := cmp.Or(r.droppedOp(addr, c.Expr), cancelled(c.Expr)); why != "" {
					f.Chains, f.Unavailable = nil, why
					break
				}
			}
			site.Args = append(site.Args, expandStruct(f, len(site.Args))...)
		}
		p.Sites = append(p.Sites, site)
		return nil
	}
	switch {
	case d.Return:
		if fn.LowPC == 0 {
			return nil, fmt.Errorf("%s: %s has no out-of-line copy to return from (it exists only inlined)", d.Text, fn.Name)
		}
		rets, err := r.returns(fn)
		if err != nil {
			return nil, err
		}
		r.captures = nil
		for _, a := range rets {
			if err := add(spec.SiteReturn, fn.Name, a, paramVars(fn, fn.LowPC)); err != nil {
				return nil, err
			}
		}
		if len(r.captures) > 0 {
			off, err := r.ef.FileOffset(fn.LowPC)
			if err != nil {
				return nil, err
			}
			at := r.placement(fn)
			if off, err = r.ef.FileOffset(at); err != nil {
				return nil, err
			}
			site := spec.Site{Kind: spec.SiteCapture, Function: fn.Name, Addr: at, FileOffset: off, Guard: r.guard(fn, at)}
			for k, c := range r.captures {
				site.Args = append(site.Args, spec.Fetch{Name: fmt.Sprintf("@%d", k), Type: "x64", Size: 8, Chains: []spec.Chain{c}})
			}
			p.Sites = append(p.Sites, site)
			if fn.Lang == types.LangGo {
				p.CaptureKey = r.arch.GoG
			}
		}
	case d.Line > 0:
		addr, err := r.lineAddr(fn, d.Line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.Text, err)
		}
		addr = r.lineAt(fn, addr, args)
		vars, err := varsAt(addr)
		if err != nil {
			return nil, err
		}
		if err := add(spec.SiteLine, fn.Name, addr, vars); err != nil {
			return nil, err
		}
	case d.Offset > 0 || d.Addr != 0:
		if fn.LowPC == 0 || d.Offset >= fn.Size {
			return nil, fmt.Errorf("%s: offset %#x is outside %s (%d bytes)", d.Text, d.Offset, fn.Name, fn.Size)
		}
		if ok, err := r.boundary(fn, fn.LowPC+d.Offset); err != nil || !ok {
			return nil, fmt.Errorf("%s: %s+%#x is not an instruction boundary", d.Text, fn.Name, d.Offset)
		}
		vars, err := varsAt(fn.LowPC + d.Offset)
		if err != nil {
			return nil, err
		}
		if err := add(spec.SiteOffset, fn.Name, fn.LowPC+d.Offset, vars); err != nil {
			return nil, err
		}
	default:
		if fn.LowPC != 0 {
			addr := fn.LowPC
			for _, pa := range fn.Params {
				if pa.PC > addr && used(d, pa.Name) {
					addr = pa.PC // a frame slot filled by the prologue
				}
			}
			vars := paramVars(fn, addr)
			if addr == fn.LowPC {
				addr = r.entryAt(fn, d)
			}
			if vars, err = r.movedEntry(fn, addr, vars); err != nil {
				return nil, err
			}
			note := ""
			if at, lv, n, ok := r.later(fn, args, vars); ok {
				addr, vars, note = at, lv, n
			}
			if err := add(spec.SiteEntry, fn.Name, addr, vars); err != nil {
				return nil, err
			}
			p.Sites[len(p.Sites)-1].Note = note
		}
		for _, in := range fn.Inlined {
			if continuation(fn, in) || merged(fn, in) {
				continue // code of calls other sites count
			}
			r.group++
			var copies []copySite // the sites of this expansion that are copies
			starts := r.joinStarts(fn, in, r.inlineStarts(fn, in), args)
			addrs := make([]uint64, len(starts))
			for i, st := range starts {
				addrs[i] = st.addr
			}
			for _, st := range starts {
				if st.mark != nil {
					st.mark.Group = r.group
					if !st.mark.Start {
						off, err := r.ef.FileOffset(st.addr)
						if err != nil {
							return nil, err
						}
						p.Sites = append(p.Sites, spec.Site{Kind: spec.SiteClear, Function: in.Caller, Addr: st.addr, FileOffset: off, Mark: st.mark})
						continue
					}
				}
				vars, err := varsAt(st.addr)
				if err != nil {
					return nil, err
				}
				at, params, later := r.laterInline(fn, in, st, addrs, args, inlineParams(fn, vars))
				if err := add(spec.SiteInline, in.Caller, at, params); err != nil {
					return nil, err
				}
				s := &p.Sites[len(p.Sites)-1]
				s.Note = strings.TrimPrefix(st.note+"; "+later, "; ")
				s.Note = strings.TrimSuffix(s.Note, "; ")
				s.Mark = st.mark
				if st.copies {
					copies = append(copies, copySite{len(p.Sites) - 1, wholeConsts(params)})
				}
			}
			distrustConstants(p.Sites, copies)
		}
		for _, c := range fn.Clones {
			if c.Kind == "part" || c.Kind == "cold" {
				continue // a continuation of a call, not a call
			}
			vars, err := varsAt(c.Address)
			if err != nil {
				return nil, err
			}
			if err := add(spec.SiteClone, c.Symbol, c.Address, vars); err != nil {
				return nil, err
			}
		}
	}
	if len(p.Sites) == 0 {
		return nil, fmt.Errorf("%s: %s has no code to probe (no out-of-line copy, inline site or clone)", d.Text, fn.Name)
	}
	sortSites(p.Sites)
	return p, nil
}

// sortSites orders sites by address, clear sites (see Mark), which count
// nothing and read no argument, last: a probe's first site has its
// arguments.
func sortSites(sites []spec.Site) {
	sort.SliceStable(sites, func(i, j int) bool {
		ci, cj := sites[i].Kind == spec.SiteClear, sites[j].Kind == spec.SiteClear
		if ci != cj {
			return cj
		}
		return sites[i].Addr < sites[j].Addr
	})
}

func used(d *Def, name string) bool {
	for _, a := range d.Args {
		if a.Base == name || a.Base == "$params" {
			return true
		}
	}
	return false
}

// paramVars are fn's parameters as variables at its entry site.
func paramVars(fn *types.Func, addr uint64) []types.Var {
	var vs []types.Var
	for _, p := range fn.Params {
		if p.Result {
			continue
		}
		v := types.Var{Name: p.Name, Type: p.Type, Param: true, Loc: p.Loc}
		if p.PC > addr {
			v.Loc = types.Loc{} // not there yet
		}
		vs = append(vs, v)
	}
	return vs
}

// movedEntry gives the parameters of an entry site at addr, past fn's
// first instruction, their locations there: a location list says where a
// value is at each address, and the one at the entry (a register the
// prologue then reuses, a stack slot relative to the entry's stack
// pointer) is stale further on. A parameter the list does not place at
// addr is not there.
func (r *Resolver) movedEntry(fn *types.Func, addr uint64, vars []types.Var) ([]types.Var, error) {
	if addr <= fn.LowPC || r.f == nil || len(vars) == 0 {
		return vars, nil
	}
	at, err := r.varsAt(addr)
	if err != nil {
		return nil, err
	}
	locs := map[string]types.Loc{}
	for _, v := range at {
		if v.Param && v.Inline == "" {
			locs[v.Name] = v.Loc
		}
	}
	out := make([]types.Var, len(vars))
	for i, v := range vars {
		v.Loc = locs[v.Name]
		out[i] = v
	}
	return out, nil
}

// inlineParams keeps the parameters of fn's expansion among the variables
// at an inline site (which also holds its caller's, and those of any
// expansion nested at the same address); VarsAt names expansions as
// Functions names functions.
func inlineParams(fn *types.Func, vars []types.Var) []types.Var {
	var out []types.Var
	for _, v := range vars {
		if v.Param && v.Inline == fn.Name {
			out = append(out, v)
		}
	}
	return out
}

// lineAddr is the first address of line in fn's own code, or of the first
// expansion called from it.
func (r *Resolver) lineAddr(fn *types.Func, line int) (uint64, error) {
	if r.f == nil {
		return 0, fmt.Errorf("%s has no debug info: FUNC:LINE needs DWARF", r.path)
	}
	rows, err := r.f.Lines(fn)
	if err != nil {
		return 0, err
	}
	if err := r.all(); err != nil {
		return 0, err
	}
	_, lines := code.SourceLines(fn, rows, code.InlinedInto(r.model.Funcs(), fn.Name))
	var have []string
	for _, l := range lines {
		addrs := append([]uint64{}, l.Addrs...)
		for _, in := range l.Inlines {
			addrs = append(addrs, in.Site.EntryPC)
		}
		if len(addrs) == 0 {
			continue
		}
		have = append(have, fmt.Sprint(l.Line))
		if l.Line == line {
			sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
			return addrs[0], nil
		}
	}
	return 0, fmt.Errorf("line %d has no code in %s (lines with code: %s)", line, fn.Name, strings.Join(have, " "))
}

// decodes reports whether the binary's instructions can be decoded, for
// returns, instruction boundaries, Go's stack check and the control flow
// that places inline sites: x86asm reads x86-64 only.
func (r *Resolver) decodes() bool { return r.arch.Name == "x86_64" }

// insns decodes fn's out-of-line code: the range holding its entry from
// the entry on, then its other ranges (a split function's cold part) in
// address order.
func (r *Resolver) insns(fn *types.Func, each func(addr uint64, in x86asm.Inst)) error {
	if !r.decodes() {
		return fmt.Errorf("%s: %w: instruction decoding is x86-64 only", r.path, arch.ErrUnsupportedArch)
	}
	ranges := fn.Ranges
	if len(ranges) == 0 && fn.Size > 0 {
		ranges = [][2]uint64{{fn.LowPC, fn.LowPC + fn.Size}}
	}
	var first [][2]uint64
	var rest [][2]uint64
	for _, rg := range ranges {
		if fn.LowPC >= rg[0] && fn.LowPC < rg[1] {
			first = append(first, [2]uint64{fn.LowPC, rg[1]})
		} else {
			rest = append(rest, rg)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i][0] < rest[j][0] })
	for _, rg := range append(first, rest...) {
		if err := r.decode(fn, rg[0], rg[1], each); err != nil {
			return err
		}
	}
	return nil
}

// returns are the addresses of fn's RET instructions: a return probe on
// each is safe where a uretprobe is not (Go moves stacks, and a uretprobe's
// rewritten return address breaks that).
func (r *Resolver) returns(fn *types.Func) ([]uint64, error) {
	var out []uint64
	err := r.insns(fn, func(a uint64, in x86asm.Inst) {
		if in.Op == x86asm.RET {
			out = append(out, a)
		}
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: %s has no RET instruction (it never returns, or ends in a tail call)", r.path, fn.Name)
	}
	return out, err
}

// boundary reports whether addr starts an instruction of fn.
func (r *Resolver) boundary(fn *types.Func, addr uint64) (bool, error) {
	ok := false
	err := r.insns(fn, func(a uint64, _ x86asm.Inst) { ok = ok || a == addr })
	return ok, err
}

// expand turns $params into one argument per parameter and Go's $retval
// into one per result, and checks that every variable an entry, inline,
// clone or return probe names is a parameter.
func (r *Resolver) expand(d *Def, fn *types.Func) ([]Arg, error) {
	var out []Arg
	var params, results []types.Param
	for _, p := range fn.Params {
		if p.Result {
			results = append(results, p)
		} else {
			params = append(params, p)
		}
	}
	for _, a := range d.Args {
		switch {
		case a.Base == "$params":
			for _, p := range params {
				out = append(out, Arg{Name: p.Name, Expr: p.Name, Base: p.Name, Path: a.Path, Type: a.Type})
			}
		case a.Base == "$retval" && fn.Lang == types.LangGo && len(results) > 1 && len(a.Path) == 0:
			for i, p := range results {
				out = append(out, Arg{Name: resultName(p, i), Expr: a.Expr, Base: fmt.Sprintf("$retval#%d", i), Type: a.Type})
			}
		case retvalN(a.Base) >= 0:
			i := retvalN(a.Base)
			if fn.Lang == types.LangGo && len(fn.Params) > 0 || i > 0 {
				if i >= len(results) {
					return nil, fmt.Errorf("%s: %s has %d results: $retval0 to $retval%d", d.Text, fn.Name, len(results), max(len(results)-1, 0))
				}
				a.Base = fmt.Sprintf("$retval#%d", i)
			} else {
				a.Base = "$retval"
			}
			out = append(out, a)
		case strings.HasPrefix(a.Base, "$") && a.Base != "$retval" && !IsBuiltin(a.Base):
			return nil, fmt.Errorf("%s: unknown %s (use $params, $retval, $retvalN, a parameter, a variable, %%REG or a builtin: %s)", d.Text, a.Base, builtinNames())
		case strings.HasPrefix(a.Base, "$") || strings.HasPrefix(a.Base, "%"):
			out = append(out, a)
		default:
			if i := resultNamed(results, a.Base); d.Return && i >= 0 && !isParam(params, a.Base) {
				a.Base = fmt.Sprintf("$retval#%d", i)
				out = append(out, a)
				continue
			}
			if d.Line == 0 && d.Offset == 0 {
				found := false
				var names []string
				for _, p := range params {
					found = found || p.Name == a.Base
					names = append(names, p.Name)
				}
				if !found {
					_, found = r.global(fn.LowPC, a.Base)
				}
				if !found && len(fn.Params) == 0 && fn.Decl.File == "" {
					return nil, fmt.Errorf("%s: %s has no debug info for %s, so no parameter names: read registers (%s for C; %s for Go) or $retval", d.Text, r.path, fn.Name, regList(r.arch.CIntRegs), regList(r.arch.GoIntRegs[:min(5, len(r.arch.GoIntRegs))]))
				}
				if !found {
					return nil, r.noParam(d, fn, a.Base, names, results)
				}
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// Types returns the named types the definitions' arguments start from
// (through pointers): what a generated program's header should define.
func (r *Resolver) Types(defs []*Def) []types.Type {
	seen := map[types.Type]bool{}
	var out []types.Type
	for _, d := range defs {
		if d.Func == "" || r.f == nil && r.model == nil {
			continue // a USDT probe's or a line's arguments have no named types
		}
		fn, err := r.lookup(d.Func)
		if err != nil {
			continue
		}
		if fn, err = r.params(fn); err != nil {
			continue
		}
		for _, p := range fn.Params {
			if !used(d, p.Name) {
				continue
			}
			t := p.Type
			for i := 0; i < types.MaxDepth; i++ {
				ptr, ok := types.Resolve(t).(*types.Pointer)
				if !ok {
					break
				}
				t = ptr.Target
			}
			if s, ok := types.Resolve(t).(*types.Struct); ok && s.Name != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// placement is where an entry probe on fn costs least: a uprobe on an
// instruction the kernel emulates (a branch, a call, a push) costs about a
// quarter of one it must single-step. Instructions that change no register
// and no memory (endbr64, nop, cmp, test) may be skipped to reach one:
// every argument is still where it was at the entry, and the skipped
// instructions run once per call as the entry does. A Go function's stack
// check (cmp 0x10(%r14),%rsp; jbe morestack, in any of its shapes: see
// Guard) puts the probe on the jbe; the check's scratch register (R12) is
// no argument register.
func (r *Resolver) placement(fn *types.Func) uint64 {
	if !r.decodes() || fn.Size == 0 {
		return fn.LowPC
	}
	if sc, ok := r.stackCheck(fn); ok {
		return sc.branch
	}
	at := fn.LowPC
	found := false
	n := 0
	_ = r.insns(fn, func(a uint64, in x86asm.Inst) {
		if found || n > 3 {
			return
		}
		n++
		switch in.Op {
		case x86asm.NOP, x86asm.CMP, x86asm.TEST: // endbr64 decodes as a NOP
			return // changes only flags
		case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE, x86asm.JG, x86asm.JGE,
			x86asm.JL, x86asm.JLE, x86asm.JMP, x86asm.CALL, x86asm.PUSH:
			at = a
		}
		found = true
	})
	return at
}

// resolveFileLine finds every place the code of FILE:LINE starts: one site
// per function that holds it, and per inline expansion when the line is in
// an inlined body (a header's inline function), as perf probe does.
func (r *Resolver) resolveFileLine(d *Def) (*spec.Probe, error) {
	if r.f == nil {
		return nil, fmt.Errorf("%s: %s has no debug info: FILE:LINE needs DWARF", d.Text, r.path)
	}
	addrs, err := r.f.LineAddrs(d.File, d.Line)
	if err != nil {
		return nil, err
	}
	if err := r.all(); err != nil {
		return nil, err
	}
	p := &spec.Probe{Def: d.Text, Function: fmt.Sprintf("%s:%d", d.File, d.Line)}
	seen := map[string]bool{}
	for _, a := range addrs {
		fn := r.model.Func(a)
		if fn == nil {
			continue // code the linker dropped
		}
		if _, err := r.params(fn); err != nil {
			return nil, err
		}
		key := fn.Name
		chain := r.model.Expansions(a)
		if len(chain) > 0 {
			key = fmt.Sprintf("%s@%#x", fn.Name, chain[0].EntryPC)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if p.Lang == "" {
			p.Lang = fn.Lang.String()
		}
		if len(chain) == 0 {
			a = r.lineAt(fn, a, d.Args)
		}
		off, err := r.ef.FileOffset(a)
		if err != nil {
			return nil, err
		}
		vars, err := r.varsAt(a)
		if err != nil {
			return nil, err
		}
		vars = r.inFrame(a, vars)
		r.at = a
		site := spec.Site{Kind: spec.SiteLine, Function: fn.Name, Addr: a, FileOffset: off}
		if len(chain) == 0 {
			site.Guard = r.guard(fn, a)
		}
		for _, arg := range d.Args {
			f, err := r.fetch(fn, arg, vars, spec.SiteLine)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Text, err)
			}
			site.Args = append(site.Args, expandStruct(f, len(site.Args))...)
		}
		p.Sites = append(p.Sites, site)
	}
	if len(p.Sites) == 0 {
		return nil, fmt.Errorf("%s: %w: no code for %s:%d in %s", d.Text, types.ErrNotFound, d.File, d.Line, r.path)
	}
	return p, nil
}

// regList spells registers as definitions name them: "%rdi, %rsi".
func regList(regs []string) string {
	var out []string
	for _, r := range regs {
		out = append(out, "%"+strings.ToLower(r))
	}
	return strings.Join(out, ", ")
}

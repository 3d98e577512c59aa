package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// target is the binary a Resolver resolves against, opened once: its ELF
// file, its DWARF (nil: symbols only), its architecture, and the model of
// its code, read as definitions need it (see all and quick). Nothing in it
// depends on a definition or a site.
type target struct {
	f    *dwarf.File // nil: symbols only (no debug info)
	ef   *elfx.File
	path string
	arch *arch.Arch
	// model is every function, nil until read (see all); near the model
	// of the units the quick lookup read; syms the symbols it reads by.
	model *code.Model
	near  *code.Model
	syms  *symtab.Table
	// globals are the unit-level variables looked up by name (see
	// global), by the address looked from and the name.
	globals map[globalKey]globalVar
	regABI  *bool // the binary's Go code uses the register ABI; nil until asked (see goRegABI)
}

// all reads every function once (see NewResolver), the type index built
// meanwhile on another core. A quick lookup (see quick) builds the index
// only if the probe reads arguments: a count needs no type.
func (t *target) all() error {
	if t.model != nil {
		return nil
	}
	t.f.IndexTypes()
	m, err := code.New(t.f, &code.Options{Params: true, DeferParams: true})
	if err != nil {
		return err
	}
	t.model = m
	return nil
}

// quick finds the function named name by its symbol, or by a symbol that
// demangles to name (a C++ method as users write it), reading only the
// units that concern it; nil when the name is not one symbol's, or when
// those units hold other functions of that name (overloads: the whole
// file decides).
func (t *target) quick(name string) *types.Func {
	if t.syms == nil {
		t.syms = code.Symbols(t.f)
	}
	syms := t.syms.Named(naming.StripVersion(name))
	demangled := len(syms) == 0
	if demangled {
		syms = t.syms.Demangled(name)
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
	m, err := code.New(t.f, &code.Options{Params: true, DeferParams: true, At: addr, Syms: t.syms})
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
		t.near = m
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

// lookup finds the function a definition names, by any name the model
// of code knows (demangled, linkage, alias, versioned symbol), or says
// which names are closest. Its parameters are not filled (see params).
func (t *target) lookup(name string) (*types.Func, error) {
	if t.model == nil {
		if fn := t.quick(name); fn != nil {
			return fn, nil
		}
		if err := t.all(); err != nil {
			return nil, err
		}
	}
	fs := t.model.Lookup(name)
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
		return nil, fmt.Errorf("%s: %s names %d functions; name one: %s", t.path, name, len(withCode), strings.Join(names, "; "))
	case len(fs) > 0:
		return fs[0], nil
	}
	near := types.Closest(t.model.Names(), name, 3)
	if len(near) > 0 {
		return nil, fmt.Errorf("%s: %w: no function %s (closest: %s)", t.path, types.ErrNotFound, name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("%s: %w: no function %s", t.path, types.ErrNotFound, name)
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

// sameNamed are the functions other than fn with code that name denotes
// and that print as fn does. Never in Go, where the second function of a
// name is the ABI wrapper (runtime.mstart0.abi0) that calls the first.
func (t *target) sameNamed(name string, fn *types.Func) []*types.Func {
	if t.model == nil || fn.Lang == types.LangGo {
		return nil
	}
	var out []*types.Func
	for _, o := range t.model.Lookup(name) {
		if o != fn && o.Name == fn.Name && (o.LowPC != 0 || len(o.Inlined) > 0 || len(o.Clones) > 0) {
			out = append(out, o)
		}
	}
	return out
}

// params fills fn's parameters, which the walk deferred: only the
// functions a definition names pay for their types.
func (t *target) params(fn *types.Func) (*types.Func, error) {
	if t.f != nil && fn != nil {
		if err := t.f.FillParams(fn); err != nil {
			return nil, err
		}
	}
	return fn, nil
}

// varsAt is f.VarsAt, or nothing without debug info.
func (t *target) varsAt(pc uint64) ([]types.Var, error) {
	if t.f == nil {
		return nil, nil
	}
	return t.f.VarsAt(pc)
}

// global is the unit-level variable named name a probe at pc reads when
// no parameter or local of that name is in scope (see dwarf.File.Global).
func (t *target) global(pc uint64, name string) (types.Var, bool) {
	if t.f == nil {
		return types.Var{}, false
	}
	k := globalKey{pc, name}
	if g, ok := t.globals[k]; ok {
		return g.v, g.ok
	}
	v, ok, err := t.f.Global(pc, name)
	if t.globals == nil {
		t.globals = map[globalKey]globalVar{}
	}
	t.globals[k] = globalVar{v, ok && err == nil}
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

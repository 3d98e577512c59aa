package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/types"
)

// quick finds the function named name by its symbol, or by a symbol that
// demangles to name (a C++ method as users write it), reading only the
// units that concern it; nil when the name is not one symbol's, or when
// those units hold other functions of that name (overloads: the whole
// file decides). Kept for speed: `bash bench/before.sh main REV 15
// probe-glibc probe-python3.11d` with quick returning nil in REV: 2.5 and
// 4.3 times the CPU time (15 of 15 pairs each).
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

// expandFuncs is d itself, or for a pattern one definition per function
// it names, with an estimate of their sites (see expandDef).
func (t *target) expandFuncs(d *Def) ([]*Def, int, error) {
	if d.File != "" || !naming.IsPattern(d.Func) {
		return []*Def{d}, 0, nil
	}
	if t.model == nil {
		if fn := t.quick(d.Func); fn != nil {
			return []*Def{d}, 0, nil // a name that only looks like a pattern (operator*)
		}
		if err := t.all(); err != nil {
			return nil, 0, err
		}
	}
	for _, fn := range t.model.Lookup(d.Func) {
		if fn.Name == d.Func {
			return []*Def{d}, 0, nil
		}
	}
	pat := naming.NewPattern(d.Func)
	by := map[string]int{}
	var names []string
	for _, fn := range t.model.Funcs() {
		if !pat.Match(fn.Name) || fn.LowPC == 0 && (d.Return || len(fn.Inlined) == 0 && len(fn.Clones) == 0) {
			continue
		}
		if _, ok := by[fn.Name]; !ok {
			names = append(names, fn.Name)
		}
		by[fn.Name] += estimateSites(fn)
	}
	if len(names) == 0 {
		return nil, 0, t.noMatch(d, t.model.Names())
	}
	sort.Strings(names)
	out, sites := make([]*Def, 0, len(names)), 0
	for _, n := range names {
		e := *d
		e.Func, e.Text = n, strings.Replace(d.Text, d.Func, n, 1)
		out = append(out, &e)
		sites += by[n]
	}
	return out, sites, nil
}

// estimateSites counts fn's places before they are placed.
func estimateSites(fn *types.Func) int {
	n := len(fn.Inlined)
	if fn.LowPC != 0 {
		n++
	}
	for _, c := range fn.Clones {
		if !naming.ContinuesCall(c.Kind) {
			n++
		}
	}
	return n
}

// noMatch says that a wildcard matches no function, with the closest
// names to its longest literal part.
func (t *target) noMatch(d *Def, names []string) error {
	near := types.Nearest(names, 5, naming.NewPattern(d.Func).Near)
	if len(near) > 0 {
		return fmt.Errorf("%s: %w: no function matches %s (closest: %s)", t.path, types.ErrNotFound, d.Func, strings.Join(near, ", "))
	}
	return fmt.Errorf("%s: %w: no function matches %s", t.path, types.ErrNotFound, d.Func)
}

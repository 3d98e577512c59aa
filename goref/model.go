package goref

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// Applies reports whether m is the code of a Go binary without DWARF, for
// which a reference build can stand in.
func Applies(m *code.Model) bool {
	if m.DWARF != nil {
		return false
	}
	for _, fn := range m.Funcs() {
		if fn.Lang == types.LangGo {
			return true
		}
	}
	return false
}

// keepList is every function of m in the packages of names that a
// reference can keep (all of them, so that the reference's DWARF holds
// every type their code uses, as the binary's own DWARF would have), and
// the functions fns.
func keepList(m *code.Model, names, fns []string) []string {
	pkgs := map[string]bool{}
	for _, n := range names {
		if p := PackageOf(n); p != "" {
			pkgs[p] = true
		}
	}
	var keep []string
	for _, n := range fns {
		if Keepable(n) {
			keep = append(keep, n)
		}
	}
	for _, fn := range m.Funcs() {
		if fn.Lang == types.LangGo && pkgs[PackageOf(fn.Name)] && Keepable(fn.Name) {
			keep = append(keep, fn.Name)
		}
	}
	return keep
}

// Attach fills the parameters (and Go results) of the functions of m
// that names denote, m being the code of a Go binary without DWARF: their
// types come from the reference build of their packages, their locations
// at entry from the register ABI (EntryLocs), at the binary's own entry
// addresses. Functions the reference lacks keep no parameters.
func Attach(m *code.Model, names []string, opts *Options) (*Ref, error) {
	a, err := arch.ForMachine(m.ELF.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Path, err)
	}
	var want []*types.Func
	var fnames []string
	for _, n := range names {
		for _, fn := range m.Lookup(n) {
			if fn.Lang == types.LangGo {
				want = append(want, fn)
				fnames = append(fnames, fn.Name)
			}
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	ref, err := Build(m.Path, fnames, keepList(m, fnames, fnames), opts)
	if err != nil {
		return nil, err
	}
	rm, err := code.Open(ref.Path, &code.Options{Params: true, DeferParams: true})
	if err != nil {
		return nil, fmt.Errorf("%s: reading the reference build %s: %v", m.Path, ref.Path, err)
	}
	defer rm.Close()
	for _, fn := range want {
		var rf *types.Func
		for _, c := range rm.Lookup(fn.Name) {
			if c.Name == fn.Name && !c.SymbolOnly {
				rf = c
				break
			}
		}
		if rf == nil {
			continue
		}
		if err := rm.FillParams(rf); err != nil {
			return nil, err
		}
		locs := EntryLocs(rf.Params, a)
		fn.Params = make([]types.Param, len(rf.Params))
		for i, p := range rf.Params {
			fn.Params[i] = types.Param{Name: p.Name, Type: p.Type, Result: p.Result, Loc: locs[i], PC: fn.LowPC}
		}
		fn.Decl = rf.Decl
		fn.SymbolOnly = false
	}
	return ref, nil
}

// Types loads the types of the reference build that stands in for the
// Go binary at path, which has no DWARF: names are the qualified types
// (github.com/x/y.T) or functions to be printed, whose packages the
// reference imports with every function of theirs the binary has.
func Types(path string, names []string, opts *Options) (*types.Spec, *Ref, error) {
	var qualified []string
	for _, n := range names {
		if PackageOf(n) != "" {
			qualified = append(qualified, n)
		}
	}
	if len(qualified) == 0 {
		return nil, nil, fmt.Errorf("%s: %w: a Go binary without DWARF: name the types by their import paths (-C github.com/x/y.T) for a reference build of their packages", path, types.ErrNoDebugInfo)
	}
	m, err := code.Open(path, nil)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	ref, err := Build(path, qualified, keepList(m, qualified, nil), opts)
	if err != nil {
		return nil, nil, err
	}
	spec, err := dwarf.Load(ref.Path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading the reference build %s: %v", path, ref.Path, err)
	}
	spec.Path = path
	return spec, ref, nil
}

// Qualified reports whether name names a Go package member by import
// path with a domain (github.com/x/y.T), the names a reference can serve.
func Qualified(name string) bool {
	p := PackageOf(name)
	return p != "" && strings.Contains(p, "/")
}

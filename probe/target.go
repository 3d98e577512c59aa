package probe

import (
	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// image is the file as code: its ELF file, its path and its
// architecture. Its methods decode instructions (insn.go) and find Go's
// stack check (stackcheck.go).
type image struct {
	ef   *elfx.File
	path string
	arch *arch.Arch
}

// target is the binary a Resolver resolves against, opened once: its
// image (the ELF file and its architecture), its DWARF (nil: symbols
// only), and the model of its code, read as definitions need it (see all
// and quick). Nothing in it depends on a definition or a site.
type target struct {
	*image
	f *dwarf.File // nil: symbols only (no debug info)
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

// codeModel is the model of code read so far: every function, or those
// of the units the quick lookup read.
func (t *target) codeModel() *code.Model {
	if t.model != nil {
		return t.model
	}
	return t.near
}

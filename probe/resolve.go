package probe

import (
	"fmt"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// Resolver resolves definitions against one binary: the per-file target
// (embedded: the file, its DWARF and its model of code) and the
// components that read more of the file as sites need it (see the
// package doc).
type Resolver struct {
	t        *target       // the file: its code, debug info and symbols
	frames   *frameTable   // the call frame information
	flows    *flowIndex    // placement's reading of the code
	facts    *codeFacts    // what instructions compute
	slots    *slotStores   // which stores reach a stack slot
	copies   *copyConsts   // the constants of copy sites checked
	checks   *valueChecks  // whether a value's place holds it at a site
	entries  *entryValues  // values from the function's entry or its callers
	lowering *lowering     // a location's piece as operations at a pc
	placer   *inlinePlacer // where calls of an inline expansion start
	fetches  *fetcher      // the programs that read arguments at a site
	joins    *joiner       // later sites where arguments read
	group    uint32        // the last mark group given (see Mark)
	notes    *usdtNotes    // the file's USDT probes
}

// newResolver is a Resolver of t.
func newResolver(t *target) *Resolver {
	r := &Resolver{t: t, notes: &usdtNotes{t: t}, frames: &frameTable{ef: t.ef, arch: t.arch},
		flows: &flowIndex{t: t}, facts: &codeFacts{ef: t.ef, arch: t.arch}}
	r.slots = &slotStores{frames: r.frames, flows: r.flows}
	r.copies = &copyConsts{flows: r.flows, facts: r.facts}
	r.checks = &valueChecks{t: t, arch: t.arch, frames: r.frames, flows: r.flows, facts: r.facts, slots: r.slots}
	r.entries = &entryValues{t: t, arch: t.arch, frames: r.frames, flows: r.flows, slots: r.slots, checks: r.checks}
	r.placer = &inlinePlacer{t: t, frames: r.frames, flows: r.flows}
	r.lowering = &lowering{t: t, arch: t.arch, frames: r.frames, flows: r.flows, facts: r.facts, entries: r.entries}
	r.fetches = &fetcher{t: t, slots: r.slots, lowering: r.lowering}
	r.joins = &joiner{t: t, fetches: r.fetches, frames: r.frames, flows: r.flows}
	return r
}

// Close releases the files the resolver opened itself (a debug file for
// the symbols that hold USDT probes).
func (r *Resolver) Close() { r.notes.close() }

// NewResolver resolves against f's DWARF. Functions are read as
// definitions need them: a definition that names a function by its symbol
// reads only the compile units that can hold it and its inline
// expansions; a source line, or a name no symbol carries, reads them all.
func NewResolver(f *dwarf.File) (*Resolver, error) {
	a, err := arch.ForMachine(f.ELF.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return newResolver(&target{image: &image{f.ELF, f.Path, a}, f: f}), nil
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
	return newResolver(&target{image: &image{ef, ef.Path, a}, model: m}), nil
}

// NewUSDTResolver resolves USDT probes (usdt:PROVIDER:NAME) alone, from
// ef's notes and symbols: no function model is read.
func NewUSDTResolver(ef *elfx.File) (*Resolver, error) {
	a, err := arch.ForMachine(ef.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, err)
	}
	return newResolver(&target{image: &image{ef, ef.Path, a}}), nil
}

// Spec resolves every definition with the default options (see SpecWith).
func (r *Resolver) Spec(defs []*Def) (*spec.Spec, error) { return r.SpecWith(defs, nil) }

// Resolve finds every site of d and the fetch programs of its arguments.
// A name that several functions print alike (a static function of several
// units; a Rust generic's instances, which legacy symbols name without
// their arguments) gets the sites of all of them.
func (r *Resolver) Resolve(d *Def) (*spec.Probe, error) {
	if d.USDT != nil {
		return r.notes.resolve(d)
	}
	if d.File != "" {
		return r.resolveFileLine(d)
	}
	if d.Addr != 0 {
		return r.resolveAddr(d)
	}
	fn, err := r.t.lookup(d.Func)
	if err != nil {
		return nil, err
	}
	p, err := r.resolveFunc(d, fn)
	if err != nil {
		return nil, err
	}
	for _, other := range r.t.sameNamed(d.Func, fn) {
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
	if err := r.t.all(); err != nil {
		return nil, err
	}
	fn := r.t.model.Func(d.Addr)
	if fn == nil || fn.LowPC == 0 || d.Addr < fn.LowPC || d.Addr-fn.LowPC >= fn.Size {
		return nil, fmt.Errorf("%s: %w: no function's code holds %#x in %s (gofunct -a ADDR says what is there)", d.Text, types.ErrNotFound, d.Addr, r.t.path)
	}
	at := *d
	at.Func, at.Offset = fn.Name, d.Addr-fn.LowPC
	return r.resolveFunc(&at, fn)
}

package probe

import (
	"fmt"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/arch"
)

// NewModelResolver resolves against a model of code built by the caller:
// a binary without debug info whose functions another source has
// completed (a Go binary stripped of DWARF, whose parameters and result
// types come from a reference build: package goref). Functions, returns
// and inline sites are the model's; arguments are read where each
// function's Params put them at its entry.
func NewModelResolver(m *code.Model) (*Resolver, error) {
	a, err := arch.ForMachine(m.ELF.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Path, err)
	}
	return newResolver(&target{image: &image{m.ELF, m.Path, a}, model: m}), nil
}

// FileModel is the model of code the resolver read from the file alone
// (.gopclntab and the symbol tables: NewSymbolResolver, NewModelResolver),
// the one package uprobe proves sites with; nil for a resolver of DWARF
// or of USDT probes alone.
func (r *Resolver) FileModel() *code.Model {
	if r.t.f != nil || r.t.model == nil || r.t.model.DWARF != nil {
		return nil
	}
	return r.t.model
}

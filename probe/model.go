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
	return &Resolver{ef: m.ELF, path: m.Path, arch: a, model: m}, nil
}

// Package code is the model of a binary's code, as package types is the
// model of its data: every function with its instances (the out-of-line
// copy with its true entry, full clones, continuations such as .cold and
// .part pieces), its inline expansions in a tree that follows DIE nesting,
// the line at an address, and one symbol table with one naming policy.
// It is read once per file from every source the file has (DWARF, .symtab
// and .dynsym, .gopclntab) and every view asks it: gofunct's listings,
// goprobe's resolution, the stack symbolizer and codegen's prototypes.
package code

import (
	"github.com/binscope/binscope/types"
)

// Frame is one frame of the inline chain at an address.
type Frame struct {
	// Func is the function whose code this frame runs (nil when only a
	// symbol names the code); Name is its name as the language writes it.
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

// Options tune Open. A nil *Options means the defaults.
type Options struct {
	// Params fills each function's parameters and their locations.
	Params bool
}

// Model is the code of one ELF file.
type Model struct {
	Path string
}

// Open reads the code of the ELF file at path.
func Open(path string, opts *Options) (*Model, error) {
	panic("code.Open: not implemented yet")
}

// Close releases the file.
func (m *Model) Close() error { return nil }

// Funcs is every function of the file: with DWARF, its subprograms joined
// with the symbol tables; without, the symbol tables or .gopclntab.
func (m *Model) Funcs() []*types.Func { return nil }

// At is the inline chain at addr, innermost frame first, as
// `addr2line -f -i` prints it; nil when no function holds addr.
func (m *Model) At(addr uint64) []Frame { return nil }

// Lookup finds the functions a user's name denotes: the name as any
// output prints it (demangled with or without template arguments, a
// linkage name, a symbol alias, a symbol with its version).
func (m *Model) Lookup(name string) []*types.Func { return nil }

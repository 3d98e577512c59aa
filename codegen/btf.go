package codegen

import (
	"debug/elf"
	"errors"
	"runtime"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// EncodeBTF encodes the BTF of the ELF file at path, as pahole -J does: its
// named types, its functions with their prototypes and its global
// variables in the data sections that hold them, from its DWARF. opts
// gives the features, Log and Warn; the file gives the byte order, the
// argument registers, the sections, functions and variables. Names are
// spelled by CName unless opts.Ident says otherwise.
func EncodeBTF(path string, opts btf.EncodeOptions) ([]byte, error) {
	if opts.Ident == nil {
		// As --format=c names them, so that a BPF program can spell them.
		opts.Ident = CName
	}
	ef, err := elfx.Open(path)
	if err == nil {
		defer ef.Close()
		opts.Order = ef.ByteOrder
		if a, err := arch.ForMachine(ef.Machine); err == nil {
			opts.ArgRegs = a.CIntRegs
		}
		opts.Sections = dataSections(ef.File)
		opts.Relocatable = ef.Type == elf.ET_REL
	}
	spec, closeCode, err := btfInputs(path, &opts)
	if err != nil {
		return nil, err
	}
	defer closeCode()
	if ef != nil && opts.Relocatable {
		opts.Sections, opts.Vars = relocatableVars(ef.File, opts.Vars)
	}
	return btf.Encode(spec, &opts)
}

// btfInputs reads the types of path and fills opts' functions and
// variables: from one reading of the DWARF when it has functions, else the
// symbols' functions or the variables alone. The returned function closes
// the model of code the functions belong to.
func btfInputs(path string, opts *btf.EncodeOptions) (*types.Spec, func(), error) {
	none := func() {}
	c, err := loader.OpenCode(path, &loader.CodeOptions{Params: true, DeferParams: true})
	switch {
	case err == nil && c.DWARF != nil:
		// The functions' parameters are filled on one thread (their
		// walk ran on all): shared among threads, each converts the
		// types it meets, and a name two compile units define otherwise
		// (python3.11d's two struct PyModuleDef) could be tied to
		// either, the BTF then depending on -j.
		procs := runtime.GOMAXPROCS(1)
		err := c.DWARF.FillAllParams(c.Funcs())
		runtime.GOMAXPROCS(procs)
		if err != nil {
			c.Close()
			return nil, none, err
		}
		// The types from the reading of the DWARF the parameters came
		// from: one index, one inflating of the sections, and the
		// parameters' types are the named types' own.
		spec, err := c.DWARF.Types()
		if err == nil {
			opts.Funcs = c.Funcs()
			opts.Vars, err = c.DWARF.Globals()
		}
		if err != nil {
			c.Close()
			return nil, none, err
		}
		return spec, func() { c.Close() }, nil
	case err == nil:
		opts.Funcs = c.Funcs()
		none = func() { c.Close() }
	case errors.Is(err, types.ErrNotFound):
		if opts.Vars, err = loader.Globals(path); err != nil {
			return nil, none, err // no functions: the variables alone
		}
	}
	spec, _, err := loader.Types(path, &loader.TypesOptions{Format: "dwarf"})
	if err != nil {
		none()
		return nil, func() {}, err
	}
	return spec, none, nil
}

// dataSections are the sections of ef that a program's variables live in:
// allocated, neither code nor thread-local (whose addresses are offsets in
// each thread's block).
func dataSections(ef *elf.File) []btf.DataSection {
	var out []btf.DataSection
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&(elf.SHF_EXECINSTR|elf.SHF_TLS) != 0 || s.Addr == 0 || s.Size == 0 || s.Name == "" {
			continue
		}
		out = append(out, btf.DataSection{Name: s.Name, Addr: s.Addr, Size: s.Size})
	}
	return out
}

// relocatableVars places the variables gs of ef, an object file (.o),
// whose sections all start at 0: each data section at an address of its
// own after the one before, and each variable at its symbol's offset in
// its symbol's section (the debug info's addresses are offsets in
// sections it does not name). A variable without one symbol of its name
// is left out.
func relocatableVars(ef *elf.File, gs []types.Global) ([]btf.DataSection, []types.Global) {
	var secs []btf.DataSection
	base := map[elf.SectionIndex]uint64{}
	next := uint64(0)
	for i, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&(elf.SHF_EXECINSTR|elf.SHF_TLS) != 0 || s.Size == 0 || s.Name == "" {
			continue
		}
		base[elf.SectionIndex(i)] = next
		secs = append(secs, btf.DataSection{Name: s.Name, Addr: next, Size: s.Size})
		next += (s.Size + 15) &^ 15
	}
	syms, _ := ef.Symbols()
	at := map[string]uint64{}
	count := map[string]int{}
	for _, s := range syms {
		b, ok := base[s.Section]
		if !ok || elf.ST_TYPE(s.Info) != elf.STT_OBJECT {
			continue
		}
		at[s.Name] = b + s.Value
		count[s.Name]++
	}
	var out []types.Global
	for _, g := range gs {
		if count[g.Name] == 1 {
			g.Addr = at[g.Name]
			out = append(out, g)
		}
	}
	return secs, out
}

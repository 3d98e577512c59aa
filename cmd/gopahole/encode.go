package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// encodeFlags are pahole's BTF encoding options.
type encodeFlags struct {
	encode    bool     // -J: into FILE's .BTF section
	detached  string   // --btf_encode_detached: raw BTF into this file
	features  []string // --btf_features lists
	strict    []string // --btf_features_strict lists
	supported bool     // --supported_btf_features
	jobs      int      // -j: threads; 0: one per CPU
	verbose   bool     // -V: say which functions are left out
	// pahole's options from before --btf_features, each a feature.
	skipVars, skipEnum64, skipDeclTag, skipTypeTag, genFloats, genAll, genOptimized, consistent, force bool
}

func addEncodeFlags(cmd *cobra.Command, e *encodeFlags) {
	fl := cmd.Flags()
	fl.BoolVarP(&e.encode, "btf_encode", "J", false, "encode BTF from FILE's DWARF into its .BTF section (types of C, C++, Go, Rust and Zig, and functions)")
	fl.StringVar(&e.detached, "btf_encode_detached", "", "encode BTF from FILE's DWARF into the raw BTF file `OUT`, leaving FILE as it is")
	fl.StringArrayVar(&e.features, "btf_features", nil, "encode only these BTF features (comma-separated; default: pahole's standard set, +LIST: it and LIST, all: every one; see --supported_btf_features); unknown ones are ignored")
	fl.StringArrayVar(&e.strict, "btf_features_strict", nil, "as --btf_features, but an unknown feature is an error")
	fl.BoolVar(&e.supported, "supported_btf_features", false, "print the features --btf_features takes and exit")
	fl.IntVarP(&e.jobs, "jobs", "j", -1, "read with at most N threads (-jN; -j alone: one per CPU); the BTF is the same bytes for every N")
	fl.BoolVarP(&e.verbose, "verbose", "V", false, "with -J: print the functions left out and why, then the types encoded")
	for _, b := range []struct {
		p          *bool
		name, help string
	}{
		{&e.skipVars, "skip_encoding_btf_vars", "encode no variables"},
		{&e.skipEnum64, "skip_encoding_btf_enum64", "encode 8-byte enums as ENUM, values cut to 32 bits"},
		{&e.skipDeclTag, "skip_encoding_btf_decl_tag", "encode no decl tags"},
		{&e.skipTypeTag, "skip_encoding_btf_type_tag", "encode no type tags"},
		{&e.genFloats, "btf_gen_floats", "encode floating-point types as FLOAT (the default here)"},
		{&e.genAll, "btf_gen_all", "encode every feature"},
		{&e.genOptimized, "btf_gen_optimized", "encode functions kept only as clones, when their parameters are the source's (optimized_func)"},
		{&e.consistent, "skip_encoding_btf_inconsistent_proto", "leave out names functions of different prototypes share (the default here)"},
		{&e.force, "btf_encode_force", "leave out C variables whose names BTF cannot hold (else an error, as pahole)"},
	} {
		fl.BoolVar(b.p, b.name, false, b.help)
	}
	var ignore bool
	fl.BoolVar(&ignore, "reproducible_build", false, "the same input gives the same bytes (always so)")
}

// jobsArgs spells pahole's -j without a number (one thread per CPU) as
// -j0: the flag parser would take the next argument as its number.
func jobsArgs(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		switch a {
		case "--":
			return out
		case "-j", "--jobs":
			out[i] = "-j0"
		}
	}
	return out
}

func (e *encodeFlags) on() bool { return e.encode || e.detached != "" }

// featureSet is the features the flags ask for: nil for the encoder's
// default when neither --btf_features nor an older option names any.
func (e *encodeFlags) featureSet(stderr io.Writer) (*btf.Features, error) {
	legacy := e.skipVars || e.skipEnum64 || e.skipDeclTag || e.skipTypeTag || e.genAll || e.genOptimized || e.force
	if len(e.features) == 0 && len(e.strict) == 0 && !legacy {
		return nil, nil
	}
	var f btf.Features
	if len(e.features) == 0 && len(e.strict) == 0 {
		f = btf.Float | btf.DeclTag | btf.TypeTag | btf.Enum64 | btf.ConsistentFunc | btf.GlobalVar
	}
	for _, l := range e.features {
		var ignored []string
		f, ignored, _ = btf.ParseFeatures(f, l, false)
		if e.verbose {
			for _, name := range ignored {
				fmt.Fprintf(stderr, "Ignoring unsupported feature '%s'\n", name)
			}
		}
	}
	for _, l := range e.strict {
		var err error
		if f, _, err = btf.ParseFeatures(f, l, true); err != nil {
			return nil, usage.Errorf("--btf_features_strict: %v", err)
		}
	}
	switch {
	case e.genAll:
		f, _, _ = btf.ParseFeatures(f, "all", false)
	case e.genFloats:
		f |= btf.Float
	}
	if e.genOptimized {
		f |= btf.OptimizedFunc
	}
	if e.consistent {
		f |= btf.ConsistentFunc
	}
	if e.force {
		f |= btf.EncodeForce
	}
	for _, off := range []struct {
		skip bool
		f    btf.Features
	}{{e.skipVars, btf.Var | btf.GlobalVar}, {e.skipEnum64, btf.Enum64}, {e.skipDeclTag, btf.DeclTag}, {e.skipTypeTag, btf.TypeTag}} {
		if off.skip {
			f &^= off.f
		}
	}
	return &f, nil
}

// runEncode encodes the BTF of the one input file's DWARF: its named types
// and its functions with their prototypes.
func runEncode(e *encodeFlags, paths []string, stdout, stderr io.Writer) error {
	if len(paths) != 1 {
		return usage.Errorf("-J/--btf_encode_detached: name exactly one ELF file with DWARF")
	}
	features, err := e.featureSet(stderr)
	if err != nil {
		return err
	}
	switch {
	case e.jobs > 0:
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(e.jobs))
	case e.jobs == 0:
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU()))
	}
	path := paths[0]
	// Named as --format=c names them, so that a BPF program can spell them.
	opts := &btf.EncodeOptions{Ident: codegen.CName, Features: features}
	if e.verbose {
		opts.Log = func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
		opts.Warn = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	if ef, err := elfx.Open(path); err == nil {
		opts.Order = ef.ByteOrder
		if a, err := arch.ForMachine(ef.Machine); err == nil {
			opts.ArgRegs = a.CIntRegs
		}
		opts.Sections = dataSections(ef.File)
		opts.Relocatable = ef.Type == elf.ET_REL
		ef.Close()
	}
	c, err := loader.OpenCode(path, &loader.CodeOptions{Params: true, DeferParams: true})
	var spec *types.Spec
	switch {
	case err == nil && c.DWARF != nil:
		defer c.Close()
		// The functions' parameters are filled on one thread (their
		// walk ran on all): shared among threads, each converts the
		// types it meets, and a name two compile units define otherwise
		// (python3.11d's two struct PyModuleDef) could be tied to
		// either, the BTF then depending on -j.
		procs := runtime.GOMAXPROCS(1)
		err := c.DWARF.FillAllParams(c.Funcs())
		runtime.GOMAXPROCS(procs)
		if err != nil {
			return err
		}
		// The types from the reading of the DWARF the parameters came
		// from: one index, one inflating of the sections, and the
		// parameters' types are the named types' own.
		if spec, err = c.DWARF.Types(); err != nil {
			return err
		}
		opts.Funcs = c.Funcs()
		if opts.Vars, err = c.DWARF.Globals(); err != nil {
			return err
		}
	case err == nil || errors.Is(err, types.ErrNotFound):
		if err == nil {
			defer c.Close()
			opts.Funcs = c.Funcs()
		} else if opts.Vars, err = loader.Globals(path); err != nil {
			return err // no functions: the variables alone
		}
		fallthrough
	default:
		if spec, _, err = loader.Types(path, &loader.TypesOptions{Format: "dwarf"}); err != nil {
			return err
		}
	}
	if ef, err := elfx.Open(path); err == nil && opts.Relocatable {
		opts.Sections, opts.Vars = relocatableVars(ef.File, opts.Vars)
		ef.Close()
	}
	raw, err := btf.Encode(spec, opts)
	if err != nil {
		return err
	}
	if e.verbose {
		fmt.Fprintf(stdout, "File %s:\n", path)
		if err := btf.WriteLog(stdout, raw); err != nil {
			return err
		}
	}
	if e.detached != "" {
		if err := os.WriteFile(e.detached, raw, 0o644); err != nil {
			return fmt.Errorf("%s: writing BTF: %v", e.detached, err)
		}
		return nil
	}
	return btf.WriteSection(path, raw)
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

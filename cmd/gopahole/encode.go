package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/usage"
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
	opts := btf.EncodeOptions{Features: features}
	if e.verbose {
		opts.Log = func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
		opts.Warn = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	}
	raw, err := codegen.EncodeBTF(path, opts)
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

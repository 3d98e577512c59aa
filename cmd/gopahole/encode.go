package main

import (
	"debug/elf"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
)

// encodeFlags are pahole's BTF encoding options.
type encodeFlags struct {
	encode   bool   // -J: into FILE's .BTF section
	detached string // --btf_encode_detached: raw BTF into this file
}

func addEncodeFlags(cmd *cobra.Command, e *encodeFlags) {
	fl := cmd.Flags()
	fl.BoolVarP(&e.encode, "btf_encode", "J", false, "encode BTF from FILE's DWARF into its .BTF section (types of C, C++, Go, Rust and Zig, and functions)")
	fl.StringVar(&e.detached, "btf_encode_detached", "", "encode BTF from FILE's DWARF into the raw BTF file `OUT`, leaving FILE as it is")
}

func (e *encodeFlags) on() bool { return e.encode || e.detached != "" }

// runEncode encodes the BTF of the one input file's DWARF: its named types
// and its functions with their prototypes.
func runEncode(e *encodeFlags, paths []string) error {
	if len(paths) != 1 {
		return usage.Errorf("-J/--btf_encode_detached: name exactly one ELF file with DWARF")
	}
	path := paths[0]
	spec, _, err := loader.Types(path, &loader.TypesOptions{Format: "dwarf"})
	if err != nil {
		return err
	}
	// Named as --format=c names them, so that a BPF program can spell them.
	opts := &btf.EncodeOptions{Ident: codegen.CName}
	if ef, err := elfx.Open(path); err == nil {
		opts.Order = ef.ByteOrder
		opts.Sections = dataSections(ef.File)
		ef.Close()
	}
	if c, err := loader.OpenCode(path, &loader.CodeOptions{Params: true}); err == nil {
		defer c.Close()
		opts.Funcs = c.Funcs()
		if c.DWARF != nil {
			if opts.Vars, err = c.DWARF.Globals(); err != nil {
				return err
			}
		}
	}
	raw, err := btf.Encode(spec, opts)
	if err != nil {
		return err
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

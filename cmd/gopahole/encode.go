package main

import (
	"debug/elf"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/load"
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
	spec, _, err := load.Types(path, &load.TypesOptions{Format: "dwarf"})
	if err != nil {
		return err
	}
	// Named as --format=c names them, so that a BPF program can spell them.
	opts := &btf.EncodeOptions{Ident: codegen.CName}
	if ef, err := elf.Open(path); err == nil {
		opts.Order = ef.ByteOrder
		ef.Close()
	}
	if c, err := load.OpenCode(path, &load.CodeOptions{Params: true}); err == nil {
		defer c.Close()
		opts.Funcs = c.Funcs()
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

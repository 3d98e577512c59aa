package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/pretty"
	"github.com/binscope/binscope/types"
)

// prettifyFlags are pahole's options for decoding raw records.
type prettifyFlags struct {
	file                 string
	header, rangeMember  string
	seekBytes, sizeBytes string
	count, skip          int64
}

func addPrettifyFlags(cmd *cobra.Command, p *prettifyFlags) {
	fl := cmd.Flags()
	fl.StringVar(&p.file, "prettify", "", "decode FILE ('-': standard input) as records of the -C type (pahole's -C 'TYPE(sizeof,type,type_enum=ENUM,filter=MEMBER==VALUE)' arguments too)")
	fl.StringVar(&p.header, "header", "", "with --prettify: the file starts with a TYPE header (printed when no -C is given; its members are $header.MEMBER)")
	fl.StringVar(&p.rangeMember, "range", "", "with --prettify: the records are the bytes the header's MEMBER.offset and MEMBER.size span")
	fl.StringVar(&p.seekBytes, "seek_bytes", "", "with --prettify: the records start at byte N (or $header.MEMBER)")
	fl.StringVar(&p.sizeBytes, "size_bytes", "", "with --prettify: the records span N bytes (or $header.MEMBER)")
	fl.Int64Var(&p.count, "count", 0, "with --prettify: print at most N records")
	fl.Int64Var(&p.skip, "skip", 0, "with --prettify: skip N records first")
}

// runPrettify answers --prettify: the records of a file decoded as the
// types of path (the running kernel's BTF when path is empty).
func runPrettify(f *paholeFlags, path string, w io.Writer, stderr io.Writer) error {
	p := &f.prettify
	classes := command.SplitList(f.classes)
	if len(classes) > 1 || len(classes) == 0 && p.header == "" {
		return usage.Errorf("--prettify needs one record type (-C TYPE) or a --header TYPE")
	}
	if p.count < 0 || p.skip < 0 {
		return usage.Errorf("--count and --skip take a number of records, not %d", min(p.count, p.skip))
	}
	var class pretty.Class
	if len(classes) == 1 {
		var err error
		if class, err = pretty.ParseClass(classes[0]); err != nil {
			return usage.Wrap(err)
		}
	}
	var names []string // the types to read; all of them when a type_enum picks record types by name
	if class.TypeEnum == "" {
		for _, n := range []string{class.Name, p.header} {
			if n != "" {
				names = append(names, n)
			}
		}
	}
	spec, _, err := loader.Types(path, &loader.TypesOptions{Format: f.format, BTFBase: f.btfBase, Names: names, Log: stderr})
	if err != nil {
		return err
	}
	data, err := readInput(p.file)
	if err != nil {
		return err
	}
	s := &pretty.Stream{Class: class, Skip: p.skip, Count: p.count, SeekBytes: p.seekBytes, SizeBytes: p.sizeBytes,
		Range: p.rangeMember, JSON: f.json, Lookup: func(n string) types.Type { return one(spec, n) }}
	if class.Name != "" {
		if s.Type, err = find(spec, class.Name); err != nil {
			return err
		}
	}
	if p.header != "" {
		if s.Header, err = find(spec, p.header); err != nil {
			return err
		}
	}
	opts := &pretty.Options{Hex: f.hex}
	if f.syntax == "c" {
		opts.Syntax = types.LangC
	}
	if err := pretty.Prettify(w, data, s, opts); err != nil {
		return fmt.Errorf("%s: %v", inputName(p.file), err)
	}
	return nil
}

func readInput(file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(os.Stdin)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--prettify: %v", err)
	}
	return b, nil
}

func inputName(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}

// find is the one type called name (a unique short name is enough).
func find(spec *types.Spec, name string) (types.Type, error) {
	ts, err := spec.Find(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Path, err)
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("%s: %d types are called %s: name one by its qualified name", spec.Path, len(ts), name)
	}
	return ts[0], nil
}

// one is the type called name, or nil when there is none or several.
func one(spec *types.Spec, name string) types.Type {
	if ts := spec.Lookup(name); len(ts) == 1 {
		return ts[0]
	}
	return nil
}

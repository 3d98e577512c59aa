package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
	"github.com/spf13/cobra"
)

// Gopahole runs gopahole with args (without the program name) and returns
// the exit status.
func Gopahole(args []string, stdout, stderr io.Writer) int {
	return execute(gopaholeCommand(stdout, stderr), args, stdout, stderr)
}

type paholeFlags struct {
	classes    []string
	format     string
	langs      []string
	syntax     string
	output     string
	json       bool
	expand     bool
	reorg      bool
	holes      int
	bitHoles   int
	sizes      bool
	hex        bool
	cacheline  int64
	prefix     string
	exclude    string
	contains   string
	pointersTo string
	declInfo   bool
	relOffset  bool
	structs    bool
	unions     bool
	packable   bool
	skipMiss   bool
	anon       bool
	btfBase    string
}

func gopaholeCommand(stdout, stderr io.Writer) *cobra.Command {
	var f paholeFlags
	cmd := &cobra.Command{
		Use:   "gopahole [flags] [FILE]",
		Short: "Show struct, union and class layouts of Go, Rust, Zig, C and C++ binaries and of BTF",
		Long: `gopahole shows the layout of data types: members in memory order with their
offsets and sizes, holes, bit holes, tail padding and cacheline boundaries.
It reads DWARF from ELF binaries (Go, Rust, Zig, C, C++; separate debug files by
build-id or .gnu_debuglink) and BTF (the running kernel's when no FILE is given,
kernel modules, .BTF sections, raw BTF files).`,
		Example: `  gopahole -C task_struct
  gopahole -C github.com/prometheus/client_golang/prometheus.counter ./app
  gopahole --syntax=native -C 'layouts::Holey' ./rustbin
  gopahole --json -C main.Pair[int,string] ./gobin
  gopahole -H 2 --structs ./prog`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			return runPahole(&f, path, stdout, stderr)
		},
	}
	cmd.ValidArgsFunction = nil // complete file names
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVarP(&f.classes, "class_name", "C", nil, "show just these types (repeatable, comma-separated; qualified or unique short names)")
	fl.StringVarP(&f.format, "format_path", "F", "", "debugging format to read: dwarf or btf (default: by content)")
	fl.StringSliceVar(&f.langs, "lang", nil, "only types of these languages: c, c++, go, rust, zig")
	fl.StringVar(&f.syntax, "syntax", "c", "member syntax: c (pahole's) or native (each type in its own language)")
	fl.StringVar(&f.output, "format", "text", "output: text (pahole's), or c (a self-contained C header of the chosen types and their dependencies, with _Static_asserts)")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per type")
	fl.BoolVarP(&f.expand, "expand_types", "E", false, "expand member types")
	fl.BoolVarP(&f.reorg, "reorganize", "R", false, "suggest a member order that kills holes")
	fl.IntVarP(&f.holes, "holes", "H", 0, "show only types with at least N holes")
	fl.IntVarP(&f.bitHoles, "bit_holes", "B", 0, "show only types with at least N bit holes")
	fl.BoolVarP(&f.sizes, "sizes", "s", false, "show name, size and number of holes of each type")
	fl.BoolVar(&f.hex, "hex", false, "print offsets and sizes in hexadecimal")
	fl.Int64VarP(&f.cacheline, "cacheline_size", "c", 64, "cacheline size in bytes")
	fl.StringVarP(&f.prefix, "prefix_filter", "y", "", "include only types whose names start with PREFIX")
	fl.StringVarP(&f.exclude, "exclude", "x", "", "exclude types whose names start with PREFIX")
	fl.StringVarP(&f.contains, "contains", "i", "", "show types that contain a member of type NAME")
	fl.StringVarP(&f.pointersTo, "find_pointers_to", "f", "", "show types with members pointing to NAME")
	fl.BoolVarP(&f.declInfo, "show_decl_info", "I", false, "show the file and line where each type was declared")
	fl.BoolVarP(&f.relOffset, "rel_offset", "r", false, "show offsets of members of inner types relative to them")
	fl.BoolVar(&f.structs, "structs", false, "show only structs (and classes)")
	fl.BoolVar(&f.unions, "unions", false, "show only unions")
	fl.BoolVarP(&f.packable, "packable", "P", false, "show only types whose holes can be packed: name, size, packed size, saved")
	fl.BoolVar(&f.skipMiss, "skip_missing", false, "skip types named by -C that do not exist")
	fl.BoolVarP(&f.anon, "anon_include", "a", false, "include anonymous types named by a typedef")
	fl.StringVar(&f.btfBase, "btf_base", "", "base BTF of split BTF (default: the running kernel's for kernel modules)")
	addCompletion(cmd)
	_ = cmd.RegisterFlagCompletionFunc("format_path", cobra.FixedCompletions([]string{"dwarf", "btf"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "c"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("syntax", cobra.FixedCompletions([]string{"c", "native"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions([]string{"c", "c++", "go", "rust", "zig"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runPahole(f *paholeFlags, path string, stdout, stderr io.Writer) error {
	if f.cacheline <= 0 || f.cacheline&(f.cacheline-1) != 0 {
		return usageError{fmt.Errorf("--cacheline_size %d: want a power of two", f.cacheline)}
	}
	if f.syntax != "c" && f.syntax != "native" {
		return usageError{fmt.Errorf("--syntax %q: want c or native", f.syntax)}
	}
	if f.output != "text" && f.output != "c" {
		return usageError{fmt.Errorf("--format %q: want text or c", f.output)}
	}
	sel := &selection{
		classes:    splitList(f.classes),
		prefix:     f.prefix,
		exclude:    f.exclude,
		contains:   f.contains,
		pointersTo: f.pointersTo,
		structs:    f.structs,
		unions:     f.unions,
		skipMiss:   f.skipMiss,
		anon:       f.anon,
	}
	for _, l := range splitList(f.langs) {
		lang, err := types.ParseLang(l)
		if err != nil {
			return usageError{err}
		}
		sel.langs = append(sel.langs, lang)
	}
	aopts := &layout.Options{CachelineSize: f.cacheline}
	popts := &layout.PrintOptions{
		Hex:       f.hex,
		Expand:    f.expand,
		DeclInfo:  f.declInfo,
		RelOffset: f.relOffset,
		Native:    f.syntax == "native",
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if f.output == "c" {
		return writeCHeader(w, path, f, sel)
	}
	var specPath string
	render := func(n named, out *bytes.Buffer, warn *bytes.Buffer) (*layout.Layout, error) {
		l, err := layout.Analyze(n.Struct, aopts)
		if err != nil {
			fmt.Fprintf(warn, "gopahole: %s: %s: %v\n", specPath, n.Name, err)
			return nil, nil
		}
		l.Name = n.Name
		if l.Warning != "" {
			fmt.Fprintf(warn, "gopahole: %s: %s: %s\n", specPath, n.Name, l.Warning)
		}
		if len(l.Holes) < f.holes || len(l.BitHoles) < f.bitHoles {
			return nil, nil
		}
		var reorg *layout.Reorganized
		if f.packable || f.reorg {
			reorg = layout.Reorganize(l, aopts)
			if f.packable && (reorg == nil || reorg.Saved() <= 0) {
				return nil, nil
			}
		}
		switch {
		case f.json:
			return l, nil
		case f.sizes:
			fmt.Fprintf(out, "%s\t%d\t%d\n", l.Name, l.Size, len(l.Holes))
		case f.packable && !f.reorg:
			fmt.Fprintf(out, "%s\t%d\t%d\t%d\n", l.Name, l.Size, reorg.Layout.Size, reorg.Saved())
		case f.reorg:
			return nil, layout.WriteReorganized(out, reorg, popts)
		default:
			return nil, layout.WriteText(out, l, popts)
		}
		return nil, nil
	}
	pl := newPipeline(render, w, stderr)
	// Without -C, types are analysed and printed while the loader is still
	// converting the rest (BTF hands them over one by one).
	var each func(types.Type)
	if len(sel.classes) == 0 {
		specPath = pathOrKernel(path)
		pk := newPicker(sel)
		each = func(t types.Type) {
			if n, ok := pk.take(t); ok {
				pl.add(n)
			}
		}
	}
	spec, streamed, err := loadNamed(path, f.format, sel.classes)
	if spec == nil && err == nil {
		spec, streamed, err = loadTypes(path, f.format, f.btfBase, sel.classes, each)
	}
	if err != nil {
		pl.abort()
		return err
	}
	if !streamed {
		specPath = spec.Path
		popts.ForcePadding = spec.Format == "dwarf" // pahole guesses tail bitfields where the format records alignment
		picked, err := selectTypes(spec, sel)
		if err != nil {
			pl.abort()
			return err
		}
		for _, n := range picked {
			pl.add(n)
		}
	}
	results, err := pl.close()
	if err != nil {
		return err
	}
	if f.json {
		return layout.WriteJSON(w, results, popts)
	}
	return nil
}

// pipeline analyses and prints types in batches on every CPU and writes
// the batches in the order the types were added, so the output is the
// same as a serial run's.
type pipeline struct {
	render  func(n named, out, warn *bytes.Buffer) (*layout.Layout, error)
	cur     *batch
	work    chan *batch
	order   chan *batch
	done    chan struct{}
	results []*layout.Layout
	err     error
	discard atomic.Bool
}

type batch struct {
	types     []named
	out, warn bytes.Buffer
	layouts   []*layout.Layout
	err       error
	done      chan struct{}
}

const batchSize = 128

func newPipeline(render func(n named, out, warn *bytes.Buffer) (*layout.Layout, error), w io.Writer, stderr io.Writer) *pipeline {
	p := &pipeline{
		render: render,
		work:   make(chan *batch, 64),
		order:  make(chan *batch, 1<<16),
		done:   make(chan struct{}),
	}
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for b := range p.work {
				for _, n := range b.types {
					l, err := p.render(n, &b.out, &b.warn)
					if err != nil {
						b.err = err
						break
					}
					if l != nil {
						b.layouts = append(b.layouts, l)
					}
				}
				close(b.done)
			}
		}()
	}
	go func() {
		defer close(p.done)
		for b := range p.order {
			<-b.done
			if p.err != nil || p.discard.Load() {
				continue
			}
			if b.err != nil {
				p.err = b.err
				continue
			}
			stderr.Write(b.warn.Bytes())
			if _, err := w.Write(b.out.Bytes()); err != nil {
				p.err = err
			}
			p.results = append(p.results, b.layouts...)
		}
	}()
	return p
}

func (p *pipeline) add(n named) {
	if p.cur == nil {
		p.cur = &batch{done: make(chan struct{}), types: make([]named, 0, batchSize)}
	}
	p.cur.types = append(p.cur.types, n)
	if len(p.cur.types) == batchSize {
		p.flush()
	}
}

func (p *pipeline) flush() {
	if p.cur != nil {
		p.order <- p.cur
		p.work <- p.cur
		p.cur = nil
	}
}

// abort drops whatever is not written yet and waits for the workers.
func (p *pipeline) abort() {
	p.discard.Store(true)
	p.close()
}

// close waits for every batch and returns the layouts kept for JSON and
// the first error.
func (p *pipeline) close() ([]*layout.Layout, error) {
	p.flush()
	close(p.work)
	close(p.order)
	<-p.done
	return p.results, p.err
}

// writeCHeader answers --format=c: the selected types and what they need,
// as one C header.
func writeCHeader(w io.Writer, path string, f *paholeFlags, sel *selection) error {
	spec, _, err := loadTypes(path, f.format, f.btfBase, sel.classes, nil)
	if err != nil {
		return err
	}
	picked, err := selectTypes(spec, sel)
	if err != nil {
		return err
	}
	roots := make([]types.Type, 0, len(picked))
	for _, n := range picked {
		var t types.Type = n.Struct
		if n.Struct.Name == "" { // typedef struct { ... } name;
			for _, c := range spec.Lookup(n.Name) {
				if _, ok := c.(*types.Typedef); ok {
					t = c
				}
			}
		}
		roots = append(roots, t)
	}
	opts := &codegen.HeaderOptions{Source: pathOrKernel(path)}
	if ef, err := elfx.Open(path); err == nil {
		opts.BuildID = ef.BuildID
		ef.Close()
	}
	_, err = codegen.WriteHeader(w, roots, opts)
	return err
}

// loadNamed reads only the types -C names and what they refer to, from a
// file with DWARF (see dwarf.LoadNamed) or raw BTF (btf.LoadNamed); it
// returns a nil spec and no error when it does not apply (no -C, split BTF,
// a name no type has, no DWARF) and loadTypes is to read the file.
func loadNamed(path, format string, classes []string) (*types.Spec, bool, error) {
	if len(classes) == 0 {
		return nil, false, nil
	}
	if path == "" || format == "btf" {
		spec, _, err := btf.LoadNamed(pathOrKernel(path), classes, nil)
		return spec, false, err
	}
	if format != "" && format != "dwarf" {
		return nil, false, nil
	}
	if magic, err := readMagic(path); err != nil || btf.IsRaw(magic) {
		if err == nil && format == "" {
			spec, _, err := btf.LoadNamed(path, classes, nil)
			return spec, false, err
		}
		return nil, false, nil
	}
	spec, err := dwarf.LoadNamed(path, classes, nil)
	if errors.Is(err, types.ErrNoDebugInfo) && format == "" {
		return nil, false, nil // maybe .BTF
	}
	return spec, false, err
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/cmd/internal/oneshot"
	"github.com/binscope/binscope/cmd/internal/progress"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// gopahole runs gopahole with args (without the program name) and returns the
// exit status.
func gopahole(args []string, stdout, stderr io.Writer) int {
	return command.Execute(gopaholeCommand(stdout, stderr), jobsArgs(args), stdout, stderr)
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
	holeSize   int64
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
	prettify   prettifyFlags
	encode     encodeFlags
	compat     compatFlags
}

func gopaholeCommand(stdout, stderr io.Writer) *cobra.Command {
	var f paholeFlags
	cmd := &cobra.Command{
		Use:   "gopahole [flags] [FILE|DIR...]",
		Short: "Show struct, union and class layouts of Go, Rust, Zig, C and C++ binaries and of BTF",
		Long: `gopahole shows the layout of data types: members in memory order with their
offsets and sizes, holes, bit holes, tail padding and cacheline boundaries.
It reads DWARF from ELF binaries (Go, Rust, Zig, C, C++; separate debug files by
build-id or .gnu_debuglink) and BTF (the running kernel's when no FILE is given,
kernel modules, .BTF sections, raw BTF files). Several files, and
directories (every ELF file under them), read as one: a type is shown from
the first file that has it.

pahole's options mean what pahole's manual says; --version prints the
pahole release whose output gopahole reproduces (v1.24).`,
		Example: `  gopahole -C task_struct
  gopahole -C github.com/prometheus/client_golang/prometheus.counter ./app
  gopahole --syntax=native -C 'layouts::Holey' ./rustbin
  gopahole --json -C main.Pair[int,string] ./gobin
  gopahole -H 2 --structs ./prog
  gopahole -C 'perf_event_header(sizeof,type,type_enum=perf_event_type)' --header perf_file_header --range data --prettify perf.data ./perf`,
		Args: command.Args(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := f.compat.version(stdout); done {
				return err
			}
			args = f.soleClassArg(args)
			paths, err := inputs(args)
			if err != nil {
				return err
			}
			return runPahole(&f, paths, stdout, stderr)
		},
	}
	addFlags(cmd, &f)
	addCompatFlags(cmd, &f)
	addPrettifyFlags(cmd, &f.prettify)
	addEncodeFlags(cmd, &f.encode)
	command.AddCompletion(cmd)
	command.AddDebugInfo(cmd)
	for flag, values := range map[string][]string{
		"format_path": {"dwarf", "btf"}, "format": {"text", "c"}, "syntax": {"c", "native"}, "lang": {"c", "c++", "go", "rust", "zig"},
	} {
		_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	return cmd
}

func addFlags(cmd *cobra.Command, f *paholeFlags) {
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
	fl.Int64VarP(&f.holeSize, "hole_size_ge", "z", 0, "show only types with a hole of at least N bytes")
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
}

// selection is the types the flags pick.
func (f *paholeFlags) selection() (*layout.Selection, error) {
	classes, err := classList(command.SplitList(f.classes))
	if err != nil {
		return nil, err
	}
	sel := &layout.Selection{
		Classes: classes, Prefix: f.prefix, DeclExclude: f.compat.declExclude, Exclude: f.exclude, Contains: f.contains,
		PointersTo: f.pointersTo, Structs: f.structs, Unions: f.unions, SkipMissing: f.skipMiss, Anon: f.anon,
	}
	for _, l := range command.SplitList(f.langs) {
		lang, err := types.ParseLang(l)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		sel.Langs = append(sel.Langs, lang)
	}
	return sel, nil
}

func (f *paholeFlags) check() error {
	if f.compat.compile {
		f.output = "c"
	}
	if f.cacheline <= 0 || f.cacheline&(f.cacheline-1) != 0 {
		return usage.Errorf("--cacheline_size %d: want a power of two", f.cacheline)
	}
	if f.format != "" && f.format != "dwarf" && f.format != "btf" {
		return usage.Errorf("-F %q: unknown format (want dwarf or btf)", f.format)
	}
	if err := command.OneOf("--syntax", f.syntax, "c", "native"); err != nil {
		return err
	}
	return command.OneOf("--format", f.output, "text", "c")
}

// streamInfoBytes is the smallest .debug_info whose whole listing
// streams (dwarf.File.Stream): below it the whole conversion at once is
// the faster (glibc's debug file, 3 MB of .debug_info: 0.15 s against
// 0.29 s streamed) and its memory small; ceph-osd's 363 MB took 7.4 GB
// at once and 3.4 GB streamed.
var streamInfoBytes int64 = loader.LargeDWARF

// streamHeap is the heap a streamed listing collects at, and streamPace
// its pace below that: what ceph-osd's stream holds (its 363 MB
// .debug_info) is 260-470 MB, the heap collected at twice that or at the
// limit; the limit with the pages the stream maps (see dwarf.Stream) is
// its peak memory. With 768 MB and GOGC=100 the peak passed 1 GB; with
// 640 MB and 200, collections as many and the peak 800 MB.
const (
	streamHeap = 640 << 20
	streamPace = 200
)

// streams: the whole listing of path streams (see streamInfoBytes).
func streams(path string) bool {
	n := loader.DWARFInfoSize(path)
	return n > 0 && n >= streamInfoBytes
}

func runPahole(f *paholeFlags, paths []string, stdout, stderr io.Writer) error {
	if f.encode.supported {
		_, err := fmt.Fprintln(stdout, btf.SupportedFeatures())
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	sel, err := f.selection()
	if err != nil {
		return err
	}
	path := ""
	if len(paths) > 0 {
		path = paths[0]
	}
	oneshot.HugeHeap(loader.PathOrKernel(path))
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if f.encode.on() {
		return runEncode(&f.encode, paths, w, stderr)
	}
	if f.prettify.file != "" {
		return runPrettify(f, path, w, stderr)
	}
	lo := &loader.TypesOptions{Format: f.format, BTFBase: f.btfBase, Names: sel.Classes, Log: stderr, Methods: f.methods(),
		ExcludeUnits: f.compat.cuExclude, Private: f.compat.private, FirstUnit: f.compat.firstObjOnly,
		// Text that names what a pointer points to, and no more of it.
		Pointees: !f.json && f.output != "c" && !f.expand && !f.compat.expandPointers}
	if done, err := f.compat.counts(w, paths, sel); done {
		return err
	}
	if f.compat.tableStats {
		all := *lo
		all.Names = nil
		spec, err := loadMany(paths, &all)
		if err != nil {
			return err
		}
		tableCounts(stderr, spec)
	}
	if f.compat.enumerator != "" {
		return writeEnumerators(w, paths, lo, f.compat.enumerator)
	}
	if len(paths) > 1 {
		return runMany(f, sel, paths, lo, w, stderr)
	}
	if f.output == "c" {
		return writeHeader(w, path, lo, sel, f.compat.skipAtomic)
	}
	r := f.report()
	if len(sel.Classes) == 0 && f.format != "btf" && path != "" && streams(path) {
		// The whole listing of a file with a large DWARF streams, a few
		// compile units converted at a time; Run sets pahole's
		// force-padding guess for a DWARF spec, not for streamed types.
		lo.StreamDWARF = true
		r.Print.ForcePadding = !r.NoForcePadding
		oneshot.Bounded(streamPace)
		oneshot.Limit(streamHeap)
	}
	if f.compat.reorgSteps && f.reorg {
		// the layout before reorganizing, then after
		before := *r
		before.Reorganize = false
		if err := before.Run(w, stderr, sel, loader.PathOrKernel(path), func(func(types.Type)) (*types.Spec, bool, error) {
			return loader.Types(path, lo)
		}); err != nil {
			return err
		}
	}
	return r.Run(w, stderr, sel, loader.PathOrKernel(path), func(each func(types.Type)) (*types.Spec, bool, error) {
		stop := progress.Start(stderr, "gopahole", path)
		defer stop()
		lo.Each = each
		if each != nil { // a loader that streams (BTF) prints as it loads
			lo.Each = func(t types.Type) { stop(); each(t) }
		}
		return loader.Types(path, lo)
	})
}

// soleClassArg reads a first argument that names no file (and has no
// "/") as the types to show, as pahole does when it can load no file by that name and no
// -C is given ("pahole task_struct"); the other arguments stay files
// (pahole reads the running kernel then, whatever follows).
func (f *paholeFlags) soleClassArg(args []string) []string {
	if len(args) == 0 || len(f.classes) > 0 || f.encode.on() || strings.Contains(args[0], "/") {
		return args // a path is a file, missing or not
	}
	if _, err := os.Stat(args[0]); !errors.Is(err, fs.ErrNotExist) {
		return args
	}
	f.classes = []string{args[0]}
	return args[1:]
}

// report is what the flags ask to print of each type.
func (f *paholeFlags) report() *layout.Report {
	c := &f.compat
	return &layout.Report{
		Holes: f.holes, BitHoles: f.bitHoles, HoleSize: f.holeSize, Sizes: f.sizes, Packable: f.packable, Reorganize: f.reorg, JSON: f.json,
		Analyze: &layout.Options{CachelineSize: f.cacheline}, Tool: "gopahole",
		Packed: c.packed, Flexible: c.flexible, EmbeddedFlexible: c.embeddedFlexible, FixSillyBitfields: c.fixSilly, Sort: c.sort, Count: f.count(), Separator: c.separator,
		Print: &layout.PrintOptions{Hex: f.hex, Expand: f.expand, DeclInfo: f.declInfo, RelOffset: f.relOffset, Native: f.syntax == "native",
			DataOnly: c.dataOnly, ClassesAsStructs: c.classesAsStructs, Quiet: c.quiet, FlatArrays: c.flatArrays,
			NoAligned: c.noAligned, NoPacked: c.noPacked, ExpandPointers: c.expandPointers},
		NoForcePadding: c.noForcePaddings,
	}
}

// writeHeader answers --format=c: the selected types and what they need,
// as one C header.
func writeHeader(w io.Writer, path string, lo *loader.TypesOptions, sel *layout.Selection, skipAtomic bool) error {
	opts := &codegen.HeaderOptions{Source: loader.PathOrKernel(path), BuildID: loader.BuildID(path), SkipAtomicTypedefs: skipAtomic}
	var spec *types.Spec
	var err error
	if len(sel.Classes) == 0 && !sel.Anon {
		// Every named struct and union, in the loader's order: BTF hands
		// them over as they are converted, and the header is made on
		// another core meanwhile.
		var streamed bool
		if spec, streamed, err = streamHeader(w, path, lo, sel, opts); streamed {
			return err
		}
	} else {
		spec, _, err = loader.Types(path, lo)
	}
	// A loader that left out corrupt records: the header of the rest,
	// then the error.
	partial := err
	if err != nil && (spec == nil || !errors.Is(err, types.ErrPartial)) {
		return err
	}
	picked, err := layout.Select(spec, sel)
	if err != nil {
		return err
	}
	if _, err = codegen.WriteHeader(w, layout.Roots(spec, picked), opts); err != nil {
		return err
	}
	return partial
}

// writeRoots writes the header of the types picked from spec, read from
// path (and others).
func writeRoots(w io.Writer, path string, spec *types.Spec, picked []layout.Named, skipAtomic bool) error {
	opts := &codegen.HeaderOptions{Source: loader.PathOrKernel(path), BuildID: loader.BuildID(path), SkipAtomicTypedefs: skipAtomic}
	_, err := codegen.WriteHeader(w, layout.Roots(spec, picked), opts)
	return err
}

// streamHeader loads the types at path and, when the loader streams
// (BTF), writes the header of those sel picks as they are converted; else
// it returns the spec, and the caller picks from it. The roots are those
// of Select and Roots: without -a no root is a typedef.
func streamHeader(w io.Writer, path string, lo *loader.TypesOptions, sel *layout.Selection, opts *codegen.HeaderOptions) (*types.Spec, bool, error) {
	hw := codegen.NewHeaderWriter(opts, 1<<13)
	roots := make(chan types.Type, 1<<12)
	added := make(chan error, 1)
	go func() {
		var err error
		for {
			var t types.Type
			ok := true
			select {
			case t, ok = <-roots:
			default: // nothing to add: render a body meanwhile
				if err != nil || !hw.Idle() {
					t, ok = <-roots
				}
			}
			if !ok {
				break
			}
			if t != nil && err == nil {
				err = hw.Add(t)
			}
		}
		added <- err
	}()
	pk := layout.NewPicker(sel)
	each := *lo
	each.EachOnly = true // streamed: the header has the types
	each.Each = func(t types.Type) {
		if n, ok := pk.Take(t); ok {
			roots <- n.Struct
		}
	}
	spec, streamed, err := loader.Types(path, &each)
	close(roots)
	aerr := <-added
	switch {
	case err != nil || !streamed:
		return spec, false, err
	case aerr != nil:
		return nil, true, aerr
	}
	_, err = hw.Finish(w)
	return nil, true, err
}

// methods reports whether the output shows C++ member functions, which
// are read from the DWARF only then (they cost C++ loads several times
// their time without).
func (f *paholeFlags) methods() bool {
	c := &f.compat
	return f.output == "text" && !f.sizes && !f.json && !f.packable && !c.dataOnly && f.count() == layout.CountNone
}

// Package loader reads a file into the models: its types (types.Spec) from
// DWARF, from BTF (a raw BTF file, an ELF file's .BTF section, the running
// kernel's), or, for a Go binary built without DWARF, from a reference
// build of its packages (package goref); and its code (code.Model), whose
// functions a Go binary without DWARF gets their parameters for from a
// reference build too. It picks the loader by the file's content; the
// views never know which one ran.
//
// BINSCOPE_GOREF=off turns reference builds off.
package loader

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/goref"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// KernelBTF is what the tools read when no file is named, as pahole does.
const KernelBTF = "/sys/kernel/btf/vmlinux"

// PathOrKernel is the file Types reads for path: path, or KernelBTF.
func PathOrKernel(path string) string {
	if path == "" {
		return KernelBTF
	}
	return path
}

// TypesOptions tune Types. A nil *TypesOptions means the defaults.
type TypesOptions struct {
	// Format is "dwarf", "btf", or "" to choose by content (an ELF file's
	// DWARF, else its .BTF section; a raw BTF file).
	Format string
	// BTFBase is the base of split BTF (kernel modules); "" means the
	// running kernel's.
	BTFBase string
	// Names are the types asked for (gopahole -C): a file with DWARF, or
	// raw BTF, converts only them and what they refer to (dwarf.LoadNamed,
	// btf.LoadNamed), and a Go binary without DWARF gets the types of
	// their packages from a reference build.
	Names []string
	// Each, when not nil, receives every named type as soon as it is
	// converted, in the spec's order, when the loader streams (BTF does,
	// DWARF with StreamDWARF and no Names: dwarf.LoadEach); Types reports
	// whether it did.
	Each func(types.Type)
	// StreamDWARF: DWARF streams to Each too, a few compile units
	// converted at a time (dwarf.File.Stream), its spec holding no types.
	StreamDWARF bool
	// EachOnly: when the loader streams, the spec Types returns holds
	// no types, which went to Each only.
	EachOnly bool
	// Log receives what reference builds fetch and where types came from;
	// nil means nothing is said.
	Log io.Writer
	// Methods reads the member functions of C++ classes from DWARF
	// (types.Struct.Methods).
	Methods bool
	// ExcludeUnits leaves out the DWARF compile units whose names start
	// with it.
	ExcludeUnits string
	// Private lists the types DWARF defines inside other types too.
	Private bool
	// FirstUnit reads only the first DWARF compile unit.
	FirstUnit bool
	// Pointees: a C++ class behind a pointer is read by its name, kind
	// and size only (dwarf.Options.Pointees), for printers that show no
	// more of it.
	Pointees bool
}

func (o *TypesOptions) dwarfOptions() *dwarf.Options {
	if !o.Methods && !o.Private && !o.FirstUnit && o.ExcludeUnits == "" && o.Log == nil && !o.Pointees {
		return nil
	}
	d := &dwarf.Options{Methods: o.Methods, Private: o.Private, FirstUnit: o.FirstUnit, ExcludeUnits: o.ExcludeUnits, Pointees: o.Pointees}
	if o.Log != nil {
		d.Warn = func(msg string) { fmt.Fprintln(o.Log, msg) }
	}
	return d
}

// Types reads the types of path; an empty path means the running kernel's
// BTF. streamed reports whether o.Each received them as they were
// converted. Errors: types.ErrNoDebugInfo when the file has neither DWARF
// nor BTF (wrapped with the file's name), goref.ErrUnavailable when a
// reference build cannot get a module's source.
func Types(path string, o *TypesOptions) (spec *types.Spec, streamed bool, err error) {
	if o == nil {
		o = &TypesOptions{}
	}
	format := o.Format
	if path == "" {
		path = KernelBTF
		if format == "" {
			format = "btf"
		}
	}
	loadBTF := func() (*types.Spec, bool, error) {
		spec, err := btf.Load(path, &btf.Options{Base: o.BTFBase, Each: o.Each, EachOnly: o.EachOnly})
		return spec, o.Each != nil && err == nil, err
	}
	// With names, raw BTF (the kernel's) converts only their graphs
	// when it can answer exactly (btf.LoadNamed), else everything.
	loadBTFNamed := func() (*types.Spec, bool, error) {
		if len(o.Names) > 0 {
			if spec, ok, err := btf.LoadNamed(path, o.Names, nil); ok || err != nil {
				return spec, false, err
			}
		}
		return loadBTF()
	}
	switch format {
	case "dwarf":
		if len(o.Names) > 0 {
			spec, err := dwarf.LoadNamed(path, o.Names, o.dwarfOptions())
			return spec, false, err
		}
		return o.loadDWARF(path)
	case "btf":
		return loadBTFNamed()
	case "":
	default:
		return nil, false, fmt.Errorf("format %q: want dwarf or btf", format)
	}
	magic, err := readMagic(path)
	if err != nil {
		return nil, false, err
	}
	if btf.IsRaw(magic) {
		return loadBTFNamed()
	}
	if len(o.Names) > 0 {
		spec, err = dwarf.LoadNamed(path, o.Names, o.dwarfOptions())
	} else {
		spec, streamed, err = o.loadDWARF(path)
	}
	if err == nil || !errors.Is(err, types.ErrNoDebugInfo) {
		return spec, streamed, err
	}
	// No DWARF: an ELF file may still carry .BTF (a BPF object, a kernel
	// module, a binary encoded with pahole -J).
	if bspec, streamed, berr := loadBTF(); berr == nil {
		return bspec, streamed, nil
	}
	if rspec, ok, rerr := refTypes(path, o.Names, o.Log); ok {
		return rspec, false, rerr
	}
	return nil, false, err
}

// loadDWARF loads every type of path's DWARF, streamed to Each when
// StreamDWARF asks it.
func (o *TypesOptions) loadDWARF(path string) (*types.Spec, bool, error) {
	if o.Each != nil && o.StreamDWARF {
		opts := o.dwarfOptions()
		if opts == nil {
			opts = &dwarf.Options{}
		}
		opts.SavedSections, opts.MapSections = true, true
		return dwarf.LoadEach(path, opts, o.Each)
	}
	spec, err := dwarf.Load(path, o.dwarfOptions())
	return spec, false, err
}

// LargeDWARF is the size of a large .debug_info (inflated): a whole
// listing of one streams its types (gopahole) and reads its compressed
// sections mapped from the index cache (MapSections). ceph-osd's is
// 363 MB, python3.11d's 9 MB.
const LargeDWARF = 64 << 20

// DWARFInfoSize is the size, inflated, of the .debug_info section of the
// ELF file at path or of its separate debug file; 0 when neither has one.
func DWARFInfoSize(path string) int64 {
	ef, err := elfx.Open(path)
	if err != nil {
		return 0
	}
	defer ef.Close()
	if n := infoSize(ef); n > 0 {
		return n
	}
	df, _ := ef.FindDebugFile()
	if df == nil {
		return 0
	}
	defer df.Close()
	return infoSize(df)
}

// infoSize is the size of ef's .debug_info: debug/elf gives a
// SHF_COMPRESSED section's inflated size; a .zdebug_info counts as what
// it holds on disk.
func infoSize(ef *elfx.File) int64 {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := ef.Section(name); s != nil {
			return int64(s.Size)
		}
	}
	return 0
}

func readMagic(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not an ELF binary or BTF", path)
	}
	buf := make([]byte, 4)
	n, err := io.ReadFull(f, buf)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("%s: empty file: not an ELF binary or BTF", path)
	}
	return buf[:n], nil
}

// RefOff reports whether the user turned reference builds off
// (BINSCOPE_GOREF=off).
func RefOff() bool { return os.Getenv("BINSCOPE_GOREF") == "off" }

// refTypes loads the types named (qualified by import path) from a
// reference build when path is a Go binary without DWARF; ok is false
// when it is not one, or no name is qualified.
func refTypes(path string, names []string, log io.Writer) (spec *types.Spec, ok bool, err error) {
	if RefOff() || len(names) == 0 {
		return nil, false, nil
	}
	if _, err := goref.ReadOrigin(path); err != nil {
		return nil, false, nil
	}
	spec, ref, err := goref.Types(path, names, goref.OptionsFromEnv(log))
	if err != nil {
		return nil, true, err
	}
	say(log, "%s has no DWARF: %s\n", path, ref.Note())
	return spec, true, nil
}

// AttachRef gives the functions names denote in m, a Go binary without
// DWARF, their parameters from a reference build (goref.Attach, which
// reports on log what it fetches and builds); a nil Ref when m is not
// one, no name denotes a Go function of it, or reference builds are off.
// Ref.Note says where the parameters came from.
func AttachRef(m *code.Model, names []string, log io.Writer) (*goref.Ref, error) {
	if RefOff() || len(names) == 0 || !goref.Applies(m) {
		return nil, nil
	}
	return goref.Attach(m, names, goref.OptionsFromEnv(log))
}

func say(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// Code is the model of a file's code, and where its parameters came from.
type Code struct {
	*code.Model
	// Ref reports that a Go binary without DWARF got the parameters of
	// the functions asked for from a reference build.
	Ref bool
}

// CodeOptions tune OpenCode. A nil *CodeOptions means the defaults.
type CodeOptions struct {
	// Params reads every function's parameters and their locations;
	// with DeferParams, only when the model's DWARF is asked to fill
	// them (dwarf.File.FillParams, FillAllParams).
	Params      bool
	DeferParams bool
	// SpelledParams, with Params, is for a caller that only spells the
	// parameters' types (see dwarf.FuncOptions.SpelledParams).
	SpelledParams bool
	// Names, with Params, are the functions whose parameters a Go binary
	// without DWARF gets from a reference build.
	Names []string
	// Log receives what reference builds fetch.
	Log io.Writer
	// MapSections reads compressed DWARF inflated into the index cache
	// and mapped, not into the heap (dwarf.Options.MapSections): for a
	// run that reads the whole of a large file once.
	MapSections bool
}

// OpenCode reads the model of path's code: DWARF joined with the symbol
// tables, or, without debug info, .gopclntab or the symbol tables alone.
// A file with no function at all is the error dwarf.Open gives (which
// says how to get debug info), or types.ErrNotFound.
func OpenCode(path string, o *CodeOptions) (*Code, error) {
	if o == nil {
		o = &CodeOptions{}
	}
	m, err := code.Open(path, &code.Options{Params: o.Params, DeferParams: o.DeferParams, SpelledParams: o.SpelledParams, MapSections: o.MapSections})
	if err != nil {
		return nil, err
	}
	if len(m.Funcs()) == 0 {
		m.Close()
		_, err := dwarf.Open(path, nil) // the error that says how to get debug info
		if err == nil {
			err = fmt.Errorf("%s: %w: no functions", path, types.ErrNotFound)
		}
		return nil, err
	}
	c := &Code{Model: m}
	if o.Params && m.DWARF == nil {
		ref, err := AttachRef(m, o.Names, o.Log)
		if err != nil {
			m.Close()
			return nil, err
		}
		if ref != nil {
			c.Ref = true
			say(o.Log, "%s has no DWARF: %s\n", m.Path, ref.Note())
		}
	}
	return c, nil
}

// Globals are the variables path's DWARF places at static addresses
// (dwarf.File.Globals), for a file whose functions OpenCode does not give
// (an object file defining only variables).
func Globals(path string) ([]types.Global, error) {
	f, err := dwarf.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Globals()
}

// Definitions lists the named structs, classes and unions path's DWARF
// defines, once for every compile unit that defines one, as pahole's -T
// and -u count and name them (dwarf.File.Definitions); o's ExcludeUnits
// and FirstUnit choose the units.
func Definitions(path string, o *TypesOptions) ([]dwarf.Definition, error) {
	var d *dwarf.Options
	if o != nil {
		d = o.dwarfOptions()
	}
	f, err := dwarf.Open(path, d)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Definitions()
}

// FuncsBTF are the functions of path's BTF (btf.Funcs): a raw BTF file,
// an ELF file's .BTF section, or a kernel module's split BTF.
func FuncsBTF(path string) ([]*types.Func, error) { return btf.Funcs(path, nil) }

// NeedDWARF is the error for a query (what) the symbol tables or
// .gopclntab cannot answer: why path has no DWARF, wrapping
// types.ErrNoDebugInfo.
func NeedDWARF(path, what string) error {
	_, err := dwarf.Open(path, nil)
	if err == nil {
		err = fmt.Errorf("%s: %w", path, types.ErrNoDebugInfo)
	}
	return fmt.Errorf("%s needs DWARF: %w", what, err)
}

// BuildID is the ELF file's build-id in hex, or "" when it has none or is
// not an ELF file.
func BuildID(path string) string {
	ef, err := elfx.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	return ef.BuildID
}

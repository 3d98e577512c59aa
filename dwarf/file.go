// Package dwarf loads ELF binaries' DWARF (versions 2 to 5, compressed
// sections, separate debug files found by build-id or .gnu_debuglink) into
// the neutral model of package types, for Go, Rust, Zig, C and C++: the
// types (Types, LoadNamed), the functions with their instances and inline
// expansions (Functions), each function's parameters with their locations
// at entry (FuncOptions.Params, FillParams), the line table (Lines, LineAt,
// LineAddrs) and the variables available at an address (VarsAt). Symbol
// tables are package symtab's; the model of code (package code) joins both.
// Line tables are decoded by dwarf/line, location lists by dwarf/loclist.
//
// A File is the one DWARF reader of the project: it opens the ELF file once,
// indexes the type entries of every compile unit once, and converts them to
// types values on demand, for every walk that needs them.
//
// Corrupt input comes back as a *elfx.DecodeError naming the file, the
// section and the offset of the record. Types leaves a type it cannot
// decode out and returns the others with a *PartialError (matching
// types.ErrPartial). A walk over the DIEs that meets one it cannot read
// keeps those before it and loses the child of the unit DIE that holds
// it, up to its DW_AT_sibling (see lost.go); a reference into what is
// lost is refused, a functions walk says so through Options.Warn, and
// Damage says what the walks left out. The package's decoders
// return their errors as values: debug/elf's panics, on corrupt headers
// and compressed sections, are recovered in elfx.Guard.
//
// DIEs are read by one decoder (decode.go, over the scanner of scan.go)
// into the package's own Entry (entry.go), whose fields hold each value
// typed; the walks that read most DIEs read the few attributes they keep
// straight from the scan's bytes (quick.go, funcattrs.go). debug/dwarf's
// Reader, Entry and Data.Ranges are the tests' oracle only (through
// internal/dwarftest); the names of tags, attributes, classes and offsets
// are the package's own (names.go), with debug/dwarf's names, values and
// spellings. A file opens when the header of every unit of .debug_info
// reads (checkUnits): a corrupt one refuses the file with the unit's
// offset.
package dwarf

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Options tune Load. A nil *Options means the defaults.
type Options struct {
	// Langs, when not empty, keeps only compile units of these languages.
	Langs []types.Lang
	// ExcludeUnits, when not empty, leaves out the compile units whose
	// names start with it (pahole's -X).
	ExcludeUnits string
	// FirstUnit reads the first compile unit only (pahole's
	// --first_obj_only).
	FirstUnit bool
	// Private lists the types defined inside other types among the
	// named ones (pahole's --show_private_classes); those defined inside
	// functions stay out.
	Private bool
	// Warn, when not nil, receives what the reader could not do but
	// went on without (a dwz alternate file it could not find), once.
	Warn func(string)
	// Methods reads the member functions C++ classes declare
	// (types.Struct.Methods); without it they are skipped unread.
	Methods bool
	// Pointees converts a named C++ class a pointer points to by its
	// name, kind and size only, its members unread (the class it
	// declares, when only declared there, as its definition gives them),
	// rather than reading the unit that defines it: for a printer that
	// shows no type behind a pointer but by its name (gopahole -C without
	// -E, -p, --format=c or --json). A class reached by value is whole.
	Pointees bool
	// SavedSections reads the compressed DWARF sections inflated from
	// the index cache when it has them, and else writes them there for
	// the next run (see savedsections.go).
	SavedSections bool
	// MapSections, with SavedSections, writes the entry the cache lacks
	// first, each section inflated into it as read, and maps it: a run
	// that reads the whole of a large file holds none of its inflated
	// sections in its heap, only the pages it reads of the mapping,
	// which a stream or walk drops as it passes them.
	MapSections bool
	// sectionsAhead: a cold lookup by name (LoadNamed) has the sections
	// it inflates into the index cache inflated ahead, on another core
	// (see startAhead).
	sectionsAhead bool
}

// File is an ELF file opened for its DWARF.
type File struct {
	// ELF is the file that was named; Debug is the file the DWARF came
	// from (ELF itself, or a separate debug file).
	ELF   *elfx.File
	Debug *elfx.File
	Path  string

	opts Options
	// cacheMu is held over the caches of units, units' files, line
	// tables and call sites and of sections: walks and parameter fills
	// run on every core.
	cacheMu    sync.Mutex
	lineFiles  map[Offset][]string
	lineTables map[Offset]*line.Table // each unit's, read once
	callSites  map[Offset][]CallSite  // each unit's, read once
	sections   map[string]*sectionBytes
	convMu     sync.Mutex // held while the type index is built
	conv       *converter // the type index and its conversions, built once
	convErr    error
	paramsMu   sync.Mutex
	fillers    []*paramFiller // one per Functions walk with Params (see FillParams)
	unitOnce   sync.Once
	// infoUnits are the units of .debug_info (see units), read from
	// infoLen bytes at infoOf (under cacheMu).
	infoUnits  []infoUnit
	unitsErr   error // the header that ended infoUnits, nil for none
	infoOf     *byte
	infoLen    int
	abbrevs    *abbrevTables // parsed by the scans (see scan)
	unitRanges []unitRange   // every unit's address ranges, sorted (see unitAt)
	// damage is what the walks left out (see Damage), once for each
	// offset in damagedAt, under damageMu.
	damageMu  sync.Mutex
	damage    leftOut
	damagedAt map[Offset]bool
	// lostUnits are the units a walk lost a span of, by the offset of
	// the unit DIE: the first DIE it could not read (see LostAt).
	lostUnits map[Offset]Offset
	warnedAt  map[Offset]bool // the DIEs warnLost named
	// alt is the dwz alternate file .gnu_debugaltlink names (see
	// alt.go); altMissing says why it could not be opened.
	alt        *File
	altMissing string
	// saving counts the index cache entries being written (Close waits);
	// writing, the "types" entry being made, which waits for those.
	saving, writing sync.WaitGroup
	// mapped is the index cache entry the sections are read from, when
	// they are (SavedSections): a stream evicts its pages as it drops
	// units.
	mapped []byte
	// sectionsSaved: the compressed sections were read from the index
	// cache's "sections" entry, or are inflated into a new one (see
	// useSavedSections), which saving counts.
	sectionsSaved bool
	// aheadSecs are the sections to inflate ahead, not yet started
	// (startAhead).
	aheadSecs []savedSection
	// aheadKept are the sections the prefix read started inflating
	// ahead (prefixAhead), finished for the entry when it answers.
	aheadKept []savedSection
}

// typeConverter indexes the file's types once; parameters, variables at an
// address and the type listing all convert through it.
func (f *File) typeConverter() (*converter, error) {
	f.convMu.Lock()
	defer f.convMu.Unlock()
	if f.conv != nil || f.convErr != nil {
		return f.conv, f.convErr
	}
	ix, err := f.index()
	if err != nil {
		f.convErr = err
		return nil, err
	}
	f.conv = newConverter(f, ix, ix.nodes.size()/2)
	if f.alt != nil {
		if f.conv.alt, err = f.alt.typeConverter(); err != nil {
			f.conv, f.convErr = nil, err
			return nil, err
		}
	}
	return f.conv, nil
}

// IndexTypes starts building the type index in the background, on
// another core, while the caller walks the functions; the first
// conversion waits for it. Conversions themselves stay single-threaded.
func (f *File) IndexTypes() {
	go f.typeConverter()
}

// Open opens path and its DWARF. It returns an error wrapping
// types.ErrNoDebugInfo, saying how to get debug info, when neither the file
// nor a separate debug file has DWARF.
func Open(path string, opts *Options) (*File, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := newFile(ef, opts)
	if err != nil {
		ef.Close()
		return nil, err
	}
	return f, nil
}

// OpenReader is Open for an ELF image held in r (used by the fuzz tests).
func OpenReader(r io.ReaderAt, name string, opts *Options) (*File, error) {
	ef, err := elfx.NewFile(r, name)
	if err != nil {
		return nil, err
	}
	return newFile(ef, opts)
}

func newFile(ef *elfx.File, opts *Options) (*File, error) {
	df, err := debugFile(ef)
	if err != nil {
		return nil, err
	}
	f, err := newFileFrom(ef, df, opts)
	if err != nil && df != ef {
		df.Close()
	}
	return f, err
}

// debugFile is the file holding ef's DWARF: ef, or a separate debug file.
func debugFile(ef *elfx.File) (*elfx.File, error) {
	if ef.HasDWARF() {
		return ef, nil
	}
	df, tried := ef.FindDebugFile()
	if df == nil {
		return nil, noDebugInfo(ef, tried)
	}
	return df, nil
}

// closeFiles closes ef and its debug file df.
func closeFiles(ef, df *elfx.File) {
	if df != ef {
		df.Close()
	}
	ef.Close()
}

// newFileFrom reads the DWARF of df, the debug file of ef.
func newFileFrom(ef, df *elfx.File, opts *Options) (*File, error) {
	f, save := startFile(ef, df, opts)
	if err := f.finishOpen(save); err != nil {
		return nil, err
	}
	return f, nil
}

// startFile is the File of ef's DWARF, read from df, before its DWARF
// data is made (finishOpen): with SavedSections its compressed sections
// come from the index cache, or are being inflated into a new entry,
// which save commits (see useSavedSections).
func startFile(ef, df *elfx.File, opts *Options) (f *File, save func()) {
	f = makeFile(ef, df, opts)
	if f.opts.SavedSections {
		save = f.useSavedSections()
	}
	return f, save
}

// finishOpen reads the DWARF sections of f, which startFile began, checks
// its unit headers, and commits the sections entry save is for (an entry
// not read whole is dropped).
func (f *File) finishOpen(save func()) error {
	if save != nil && f.opts.sectionsAhead {
		f.startAhead()
	}
	err := f.Debug.ReadDWARF()
	if err == nil {
		err = f.openSplit()
	}
	if err == nil {
		err = f.checkUnits()
	}
	if save != nil {
		save() // on an error too: an entry begun is dropped, not left
	}
	if err != nil {
		f.saving.Wait()
		return err
	}
	f.openAlt()
	return nil
}

// dropStart ends f, which startFile began, unused: the sections stop
// inflating ahead and the entry begun for them is dropped, unless the
// prefix read started them (finishAhead).
func (f *File) dropStart(save func()) {
	if !f.finishAhead() {
		f.Debug.StopAhead()
	}
	if save != nil {
		save()
	}
	f.saving.Wait()
}

// makeFile is the File of ef's DWARF, read from df; its sections are the
// caller's to read.
func makeFile(ef, df *elfx.File, opts *Options) *File {
	f := &File{ELF: ef, Debug: df, Path: ef.Path}
	if opts != nil {
		f.opts = *opts
	}
	f.abbrevs = &abbrevTables{m: map[tableKey]*abbrevTable{}}
	return f
}

func noDebugInfo(ef *elfx.File, tried []string) error {
	hint := "rebuild with -g (C, C++, Rust: -g or debug = true; Zig: -O Debug or ReleaseSafe without -fstrip; Go: without -ldflags=-s/-w)"
	if ef.Section(".gopclntab") != nil || ef.Section(".go.buildinfo") != nil {
		hint = "Go binary stripped of DWARF: rebuild without -ldflags='-s -w'"
	}
	where := ""
	if len(tried) > 0 {
		where = "; looked for a debug file at " + strings.Join(tried, ", ")
	} else {
		where = "; no build-id or .gnu_debuglink to find a separate debug file by"
	}
	return fmt.Errorf("%s: %w: no .debug_info section (%s, or install the distribution's -dbgsym/-dbg package%s)",
		ef.Path, types.ErrNoDebugInfo, hint, where)
}

// Close releases the files.
func (f *File) Close() error {
	f.writing.Wait()
	f.saving.Wait()
	if f.alt != nil {
		f.alt.Close()
	}
	if f.Debug != f.ELF {
		f.Debug.Close()
	}
	return f.ELF.Close()
}

// Load reads every named type of the ELF file at path. Identical
// definitions in several compile units appear once.
func Load(path string, opts *Options) (*types.Spec, error) {
	f, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Types()
}

// Types converts the file's type entries into a Spec. A type whose DIEs
// are corrupt is left out, with the types that need it: the Spec of the
// rest comes back with a *PartialError naming the first one's section and
// offset (more than maxLeftOut such types: no Spec, and the error).
func (f *File) Types() (spec *types.Spec, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	return c.spec(nil)
}

// typesExact is Types for the types whose qualified names are names, and
// what they refer to: the definitions of each name Types would list, the
// same identical ones merged. ok is false when a name names no type
// exactly (a short name: Types' Find decides). A damaged file's Spec
// comes with a *PartialError, as Types gives it.
func (f *File) typesExact(names []string) (spec *types.Spec, ok bool, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, false, err
	}
	only := map[string]bool{}
	for _, n := range names {
		only[n] = true
	}
	save := f.newSave(c.ix)
	spec, err = c.spec(func(n *node, name []byte) bool {
		q := n.scope + string(name)
		save.add(q, n)
		return only[q]
	})
	if err != nil && (spec == nil || !errors.Is(err, types.ErrPartial)) {
		return nil, false, err
	}
	if err == nil {
		save.write(c) // a damaged file's index is not kept
	}
	for _, n := range names {
		if _, ferr := spec.Find(n); ferr != nil {
			return nil, false, err
		}
	}
	return spec, true, err
}

// warn gives msg to Options.Warn, when set.
func (f *File) warn(msg string) {
	if f.opts.Warn != nil {
		f.opts.Warn(msg)
	}
}

// decodeError is a *elfx.DecodeError for the DIE at off in .debug_info.
func (f *File) decodeError(off Offset, format string, args ...any) error {
	return f.infoError(off, fmt.Errorf(format, args...))
}

// infoError is err, met at the DIE at off (noOffset when not known), as a
// *elfx.DecodeError (err itself when it is one already).
func (f *File) infoError(off Offset, err error) error {
	o := uint64(off)
	if off == noOffset {
		o = elfx.NoOffset
	}
	return elfx.Decode(f.Path, ".debug_info", o, err)
}

// sectionError is a *elfx.DecodeError for the record at off in section
// sec.
func (f *File) sectionError(sec string, off int64, format string, args ...any) error {
	return elfx.Decode(f.Path, sec, uint64(off), fmt.Errorf(format, args...))
}

// noOffset is an offset infoError does not know.
const noOffset = ^Offset(0)

// errTooDeep is returned for DIE trees nested beyond reason, errEndless
// for units longer than a compiler writes.
var (
	errTooDeep = errors.New("DIE tree nested too deep")
	errEndless = errors.New("DIE tree too deep or endless")
)

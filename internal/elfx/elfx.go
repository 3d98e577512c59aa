// Package elfx is the project's one ELF opener: it wraps debug/elf with
// clear errors (recovering the panics debug/elf can raise on corrupt input),
// reads the build-id and .gnu_debuglink, finds separate debug files, and is
// the one place that turns virtual addresses into file offsets.
package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/binscope/binscope/internal/par"
)

// ErrNotELF is returned for a file that is not an ELF object.
var ErrNotELF = errors.New("not an ELF file")

// File is an open ELF file.
type File struct {
	*elf.File
	Path string
	// BuildID is the hex GNU build-id, or "".
	BuildID string
	// DebugLink is the file name in .gnu_debuglink, or "".
	DebugLink string

	closer io.Closer
	r      io.ReaderAt
	// debugLine is .debug_line as DWARF read it (decompressed), kept for
	// DebugLine.
	debugLine []byte
	// raw are the DWARF sections as ReadDWARF read them (decompressed,
	// relocated: see DWARFSection); types are its .debug_types sections.
	raw   map[string][]byte
	types [][]byte
	// lazy are the sections read through LazySection; lazyMu also
	// guards debugLine after DWARF.
	lazyMu sync.Mutex
	lazy   map[string]*Lazy
}

// DWARFSection returns the contents of a DWARF section (".debug_info",
// ".debug_abbrev", ".debug_str", ".debug_types", ...) as ReadDWARF read
// them (inflated, and relocated in an object file), or nil when ReadDWARF
// has not run or the file has no such section. A section compressed the
// GNU way (.zdebug_info) comes under its .debug_ name.
func (f *File) DWARFSection(name string) []byte { return f.raw[name] }

// DWARFTypes returns the file's .debug_types sections (DWARF 4 type
// units) as ReadDWARF read them: one, or one per COMDAT group in an
// object file, of which DWARFSection gives none.
func (f *File) DWARFTypes() [][]byte { return f.types }

// dwarfSection is the DWARF section called name (".debug_info"), or its
// compressed form of the GNU naming (".zdebug_info", which Go before 1.20
// and gcc's --compress-debug-sections=zlib-gnu write); nil for none.
func (f *File) dwarfSection(name string) *elf.Section {
	if s := f.Section(name); s != nil {
		return s
	}
	if strings.HasPrefix(name, ".debug_") {
		return f.Section(".zdebug_" + name[len(".debug_"):])
	}
	return nil
}

// DebugLine returns the contents of .debug_line (decompressed), nil when
// the file has none. After DWARF it costs nothing: the section read then
// is kept.
func (f *File) DebugLine() ([]byte, error) {
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	if f.debugLine != nil {
		return f.debugLine, nil
	}
	l, err := f.lazySectionLocked(".debug_line")
	if err == ErrNoSection {
		return nil, nil
	}
	var b []byte
	if err == nil {
		b, err = l.All()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_line: %v", f.Path, err)
	}
	f.debugLine = b
	return b, nil
}

// Open opens path as ELF. Errors name the file and say what is wrong in one
// line; a corrupt header that makes debug/elf panic is an error too.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not an ELF binary", path)
	}
	ef, err := NewFile(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	ef.closer = f
	return ef, nil
}

// NewFile reads ELF from r; name is used in errors.
func NewFile(r io.ReaderAt, name string) (*File, error) {
	var magic [4]byte
	if n, _ := r.ReadAt(magic[:], 0); n < 4 || string(magic[:]) != elf.ELFMAG {
		return nil, fmt.Errorf("%s: %w (expected a binary, shared object or debug file)", name, ErrNotELF)
	}
	var ef *File
	err := Guard(name, "", func() error {
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		ef = &File{File: f, Path: name, r: r}
		ef.BuildID = readBuildID(f)
		ef.DebugLink = readDebugLink(f)
		return nil
	})
	if err != nil {
		return nil, Decode(name, "", NoOffset, fmt.Errorf("corrupt ELF file: %w", err))
	}
	return ef, nil
}

// Close closes the underlying file.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Arch returns the machine name the project uses: x86_64, aarch64, i386,
// arm, riscv64, ppc64, s390x, or the ELF name for others.
func (f *File) Arch() string {
	switch f.Machine {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_386:
		return "i386"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_RISCV:
		return "riscv64"
	case elf.EM_PPC64:
		return "ppc64"
	case elf.EM_S390:
		return "s390x"
	case elf.EM_BPF:
		return "bpf"
	}
	return strings.ToLower(strings.TrimPrefix(f.Machine.String(), "EM_"))
}

// PointerSize is the target's pointer size in bytes.
func (f *File) PointerSize() int64 {
	if f.Class == elf.ELFCLASS32 {
		return 4
	}
	return 8
}

// HasDWARF reports whether the file has a .debug_info section (plain or
// compressed).
func (f *File) HasDWARF() bool {
	return f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
}

// DWARF stands where the embedded *elf.File's DWARF would be promoted,
// so that f.DWARF() does not compile. debug/elf's reads and inflates the
// sections anew, outside Guard (corrupt input panics) and apart from the
// sections this File keeps (ReadDWARF's, DWARFSection), and decodes them
// with debug/dwarf, the tests' oracle. A File's DWARF is ReadDWARF's
// sections decoded by package dwarf; tests get debug/dwarf's reading of
// the same bytes from internal/dwarftest.Data, and f.File.DWARF() names
// debug/elf's where a test compares with it. DWARF takes a value of a
// type no other package can make: nothing calls it.
func (f *File) DWARF(notDebugElf) {}

// notDebugElf is DWARF's parameter.
type notDebugElf struct{}

// ReadDWARF reads the file's DWARF sections, inflating compressed ones
// (SHF_COMPRESSED, or named .zdebug_*) and relocating an object file's as
// debug/elf does, and keeps their bytes for DWARFSection, DWARFTypes and
// DebugLine. Nothing of them is parsed: the readers check the unit
// headers they read. A panic inside debug/elf becomes an error naming the
// file.
func (f *File) ReadDWARF() error {
	err := Guard(f.Path, ".debug_info", func() error {
		return f.dwarfParallel(f.newRelocator())
	})
	if err != nil {
		return Decode(f.Path, ".debug_info", NoOffset, err)
	}
	return nil
}

// dwarfSections are the sections ReadDWARF reads beside .debug_types
// (location lists and .debug_frame are read by who needs them).
var dwarfSections = []string{".debug_abbrev", ".debug_info", ".debug_line", ".debug_ranges", ".debug_str",
	".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"}

// dwarfParallel reads (and decompresses) dwarfSections on every core at
// once, instead of one after another, and the .debug_types sections; rel,
// when not nil, relocates them (an object file).
func (f *File) dwarfParallel(rel *relocator) error {
	data := make([][]byte, len(dwarfSections))
	errs := make([]error, len(dwarfSections))
	par.Each(len(dwarfSections), 2, func(i int) {
		name := dwarfSections[i]
		if s := f.dwarfSection(name); s == nil || s.Type == elf.SHT_NOBITS {
			return
		}
		errs[i] = Guard(f.Path, name, func() (err error) {
			if data[i], err = f.sectionBytes(name); err != nil || rel == nil {
				return err
			}
			data[i] = append([]byte(nil), data[i]...) // the lazy section's bytes stay as read
			return rel.apply(name, data[i])
		})
	})
	for i, err := range errs {
		if err != nil {
			return Decode(f.Path, dwarfSections[i], NoOffset, err)
		}
	}
	f.keepSections(data)
	return f.readTypes(rel)
}

// readTypes reads the file's .debug_types sections (DWARF 4 type units),
// relocated by rel when not nil, and keeps them for DWARFTypes, and for
// DWARFSection when there is one (an object file has one per COMDAT
// group).
func (f *File) readTypes(rel *relocator) error {
	f.types = nil
	for i, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Name != ".debug_types" && s.Name != ".zdebug_types" {
			continue
		}
		b, err := s.Data()
		if err == nil && rel != nil {
			err = rel.applyTo(i, b)
		}
		if err != nil {
			return Decode(f.Path, s.Name, NoOffset, err)
		}
		if f.types = append(f.types, b); len(f.types) == 1 {
			f.raw[".debug_types"] = b
		} else {
			delete(f.raw, ".debug_types")
		}
	}
	return nil
}

// keepSections keeps the sections read (in the order of dwarfSections)
// for DWARFSection and DebugLine.
func (f *File) keepSections(data [][]byte) {
	f.debugLine = data[2]
	f.raw = map[string][]byte{}
	for i, name := range dwarfSections {
		if data[i] != nil {
			f.raw[name] = data[i]
		}
	}
}

// DebugRoot is the directory holding separate debug files, as gdb's
// debug-file-directory: DebugRoot/.build-id/xx/rest.debug by build-id and
// DebugRoot/DIR/LINK by debug link.
var DebugRoot = "/usr/lib/debug"

// DebugDirs are directories searched for debug files before the places
// DebugRoot gives (the commands' --debuginfo): in each, a separate debug
// file by build-id (DIR/.build-id/xx/rest.debug), by debug link
// (DIR/LINK), and split DWARF's .dwo and .dwp files by name.
var DebugDirs []string

// DebugFileCandidates lists where a separate debug file for f may be, in
// the order gdb searches them: in DebugDirs, then by build-id, then by
// debug link.
func (f *File) DebugFileCandidates() []string {
	var c []string
	for _, dir := range DebugDirs {
		if len(f.BuildID) > 2 {
			c = append(c, filepath.Join(dir, ".build-id", f.BuildID[:2], f.BuildID[2:]+".debug"))
		}
		if f.DebugLink != "" {
			c = append(c, filepath.Join(dir, f.DebugLink))
		}
	}
	if len(f.BuildID) > 2 {
		c = append(c, filepath.Join(DebugRoot, ".build-id", f.BuildID[:2], f.BuildID[2:]+".debug"))
	}
	if f.DebugLink != "" {
		dir := filepath.Dir(f.Path)
		abs, _ := filepath.Abs(dir)
		c = append(c,
			filepath.Join(dir, f.DebugLink),
			filepath.Join(dir, ".debug", f.DebugLink),
			filepath.Join(DebugRoot, abs, f.DebugLink))
	}
	return c
}

// FindDebugFile opens the first separate debug file for f that exists and
// has DWARF, or returns the paths it tried.
func (f *File) FindDebugFile() (*File, []string) {
	tried := f.DebugFileCandidates()
	self, _ := filepath.Abs(f.Path)
	for _, p := range tried {
		if abs, _ := filepath.Abs(p); abs == self {
			continue
		}
		df, err := Open(p)
		if err != nil {
			continue
		}
		if df.HasDWARF() && (f.BuildID == "" || df.BuildID == "" || df.BuildID == f.BuildID) {
			return df, tried
		}
		df.Close()
	}
	return nil, tried
}

// FileOffset converts a virtual address to the file offset that holds it,
// using the PT_LOAD segments. Uprobes take file offsets.
func (f *File) FileOffset(vaddr uint64) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("%s: address %#x is in no loadable segment", f.Path, vaddr)
}

// VirtualAddress is the virtual address of the file's byte at offset off,
// for a process's mapping of the file that starts at off: mappings start
// at a page boundary, so the segment whose first page begins at off is
// the one mapped (two segments can share a page of the file), else the
// segment holding off. The mapping's load bias is its start address minus
// VirtualAddress(off).
func (f *File) VirtualAddress(off uint64) (uint64, error) {
	const page = 4096
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off&^(page-1) == off && p.Vaddr >= p.Off-off {
			return p.Vaddr - (p.Off - off), nil
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, nil
		}
	}
	return 0, fmt.Errorf("%s: file offset %#x is in no loadable segment", f.Path, off)
}

// Code returns the n bytes of the file's image at virtual address vaddr
// (instructions to decode), read through FileOffset.
func (f *File) Code(vaddr, n uint64) ([]byte, error) {
	off, err := f.FileOffset(vaddr)
	if err != nil {
		return nil, err
	}
	if n > 1<<26 {
		return nil, fmt.Errorf("%s: %d bytes of code at %#x: too many", f.Path, n, vaddr)
	}
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: reading %d bytes at %#x: %v", f.Path, n, vaddr, err)
	}
	return b, nil
}

func readBuildID(f *elf.File) string {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil || len(data) < 16 {
			continue
		}
		bo := f.ByteOrder
		namesz := bo.Uint32(data[0:4])
		descsz := bo.Uint32(data[4:8])
		typ := bo.Uint32(data[8:12])
		off := 12 + (uint64(namesz)+3)&^3
		if typ != 3 || off+uint64(descsz) > uint64(len(data)) {
			continue
		}
		return hex.EncodeToString(data[off : off+uint64(descsz)])
	}
	return ""
}

func readDebugLink(f *elf.File) string {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(data, 0); i > 0 {
		return string(data[:i])
	}
	return ""
}

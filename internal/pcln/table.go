package pcln

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/binscope/binscope/internal/elfx"
)

// Table is a Go binary's pclntab with the addresses the Go runtime itself
// gives its entries. It is the one place Go code addresses come from:
// functions (Functions), inline marks (Inlines) and, through the model of
// code, every view, probe and artifact.
//
// Where the entries count from depends on the table's format, not on the
// ELF sections around it. Go 1.16 and 1.17 store each entry as an absolute
// address. Go 1.18 and later store offsets from runtime.text, the start of
// the Go code the runtime records in its module data (moduledata.text; Go
// 1.18 to 1.25 also copy it into the table's header). runtime.text is not
// the ELF .text section's start when an external linker put C start-up
// code first: Debian's /usr/bin/prometheus (go1.19, cgo, external
// linking) has .text at 0x402340 and runtime.text at 0x402440, so counting
// from .text puts every function 0x100 too low.
//
// In a position-independent executable those words are 0 in the file and
// an R_X86_64_RELATIVE (R_AARCH64_RELATIVE) dynamic relocation carries
// their value; Table applies those to the words it reads.
type Table struct {
	// Data is the table from its header to the end of the section holding
	// it, dynamic relocations applied.
	Data []byte
	// Addr is the table's virtual address (runtime.pclntab).
	Addr uint64
	// Text is runtime.text, the base of the entry offsets of Go 1.18 and
	// later; 0 for the absolute entries of Go 1.16 and 1.17.
	Text uint64
	// GoFunc is go:func.*, the base of funcdata offsets (Go 1.18 and
	// later), from the module data; 0 when the module data did not give it
	// (and before Go 1.18, whose funcdata are addresses).
	GoFunc uint64
	// Lines answers names, entries and lines, counting from Text.
	Lines *gosym.Table

	magic uint32
	md    []uint64 // the module data's first mdWords words; nil when not found
	rel   map[uint64]uint64
}

// Table header magics (runtime/symtab.go, debug/gosym).
const (
	magic116 = 0xfffffffa // Go 1.16, 1.17: absolute entries
	magic118 = 0xfffffff0 // Go 1.18, 1.19: entries from runtime.text
	// magic120 (inline.go): Go 1.20 and later, as magic118
)

// moduledata word indices (runtime/symtab.go): pcHeader is word 0 and
// text word 22 in every format from Go 1.16; gofunc is word 40 in Go 1.20
// to 1.26 and 43 from Go 1.27 (which added typedesclen, itaboffset and
// itabsize before it); goFunc tells them apart.
const mdText = 22

// mdWords is how many words of the module data are read: past typelinks
// in every format (the structure has more than 60 words).
const mdWords = 56

var mdGofuncs = []int{40, 43}

const mdGofunc119 = 38

// ErrNoTable is wrapped by Open when a file with Go's build information
// has no pclntab section and none could be found in its data (a Go
// compiler other than gc, or a format this reader does not know).
var ErrNoTable = errors.New("no Go function table")

// Has reports whether ef looks like a Go binary with a pclntab: a section
// named for it, or Go's build information (the external linker may have
// merged the table into .data.rel.ro, see Open).
func Has(ef *elfx.File) bool {
	return ef.Section(".gopclntab") != nil || ef.Section(".data.rel.ro.gopclntab") != nil ||
		ef.Section(".go.buildinfo") != nil
}

// Open finds ef's pclntab, its runtime text start and go:func.*.
func Open(ef *elfx.File) (t *Table, err error) {
	defer elfx.Catch(ef.Path, ".gopclntab", "table", &t, &err) // gosym.NewLineTable, NewTable
	le := binary.LittleEndian
	if ef.ByteOrder != binary.ByteOrder(le) || ef.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: .gopclntab of a %s %s binary: only 64-bit little-endian Go binaries are read", ef.Path, ef.Class, ef.ByteOrder)
	}
	rel := relatives(ef)
	t = &Table{}
	var md []uint64
	for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
		if sec := ef.Section(name); sec != nil {
			if t.Data, err = relocated(sec, rel); err != nil {
				return nil, fmt.Errorf("%s: section %s: %v", ef.Path, name, err)
			}
			t.Addr = sec.Addr
			md = moduleData(ef, rel, t.Addr)
			break
		}
	}
	if t.Data == nil {
		// Merged into another section: the module data points at it.
		if t.Data, t.Addr, md, err = findTable(ef, rel); err != nil {
			return nil, err
		}
	}
	if len(t.Data) < 64 {
		return nil, fmt.Errorf("%s: section .gopclntab: %d bytes: too short for a table header", ef.Path, len(t.Data))
	}
	t.magic = le.Uint32(t.Data)
	t.md, t.rel = md, rel
	if md != nil && t.magic == magic120 {
		t.GoFunc = goFunc(ef, md)
	} else if md != nil && t.magic == magic118 {
		// Go 1.18 and 1.19's module data has no covctrs: rodata,
		// gofunc are words 37, 38.
		if g := md[mdGofunc119]; g >= md[mdGofunc119-1] && section(ef, g) != nil {
			t.GoFunc = g
		}
	}
	switch t.magic {
	case magic116:
	case magic118, magic120:
		if md != nil {
			t.Text = md[mdText]
		} else if t.Text = le.Uint64(t.Data[24:]); t.Text == 0 {
			// Go 1.26 and later leave the header's copy 0.
			return nil, fmt.Errorf("%s: section .gopclntab: no runtime module data points at the table: cannot tell where Go's code starts", ef.Path)
		}
	default:
		return nil, fmt.Errorf("%s: section .gopclntab: table format %#x not supported (Go 1.16 and later are read)", ef.Path, t.magic)
	}
	if t.Lines, err = gosym.NewTable(nil, gosym.NewLineTable(t.Data, t.Text)); err != nil {
		return nil, fmt.Errorf("%s: section .gopclntab: %v", ef.Path, err)
	}
	return t, nil
}

// relatives maps the address of each word a relative dynamic relocation
// sets to the value it gets; nil for a file that has none.
func relatives(ef *elfx.File) map[uint64]uint64 {
	var want uint32
	switch ef.Machine {
	case elf.EM_X86_64:
		want = uint32(elf.R_X86_64_RELATIVE)
	case elf.EM_AARCH64:
		want = uint32(elf.R_AARCH64_RELATIVE)
	default:
		return nil
	}
	var m map[uint64]uint64
	for _, sec := range ef.Sections {
		if sec.Type != elf.SHT_RELA || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		le := binary.LittleEndian
		for off := 0; off+24 <= len(data); off += 24 {
			if uint32(le.Uint64(data[off+8:])) != want {
				continue
			}
			if m == nil {
				m = map[uint64]uint64{}
			}
			m[le.Uint64(data[off:])] = le.Uint64(data[off+16:])
		}
	}
	return m
}

// relocated reads sec with the relative relocations that fall in it applied.
func relocated(sec *elf.Section, rel map[uint64]uint64) ([]byte, error) {
	if sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("no data (NOBITS)")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	if uint64(len(rel)) < sec.Size/8 {
		for at, v := range rel {
			if at >= sec.Addr && at+8 <= sec.Addr+uint64(len(data)) {
				binary.LittleEndian.PutUint64(data[at-sec.Addr:], v)
			}
		}
	} else {
		for off := uint64(0); off+8 <= uint64(len(data)); off += 8 {
			if v, ok := rel[sec.Addr+off]; ok {
				binary.LittleEndian.PutUint64(data[off:], v)
			}
		}
	}
	return data, nil
}

// moduleData finds the runtime's module data of the table at pclntab
// (runtime.firstmoduledata, in a writable data section): the word array
// whose word 0 is pclntab and whose word 22 (text) lies in executable code.
// It returns the words up to the last gofunc index, or nil.
func moduleData(ef *elfx.File, rel map[uint64]uint64, pclntab uint64) []uint64 {
	words := mdWords
	le := binary.LittleEndian
	for _, sec := range ef.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_WRITE == 0 || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := relocated(sec, rel)
		if err != nil {
			continue
		}
		var key [8]byte
		le.PutUint64(key[:], pclntab)
		for from := 0; ; {
			i := bytes.Index(data[from:], key[:])
			if i < 0 {
				break
			}
			off := from + i
			from = off + 1
			if off%8 != 0 || off+8*words > len(data) {
				continue
			}
			md := make([]uint64, words)
			for k := range md {
				md[k] = le.Uint64(data[off+8*k:])
			}
			if inCode(ef, md[mdText]) {
				return md
			}
		}
	}
	return nil
}

// goFunc picks go:func.* out of md: the candidate word at or past the
// word before it (rodata) and inside a section of data. In Go 1.27 word 40
// is itaboffset, an offset, below word 39 (etypes, an address). Go 1.26
// moved go:func.* into .gopclntab, away from .rodata.
func goFunc(ef *elfx.File, md []uint64) uint64 {
	for _, k := range mdGofuncs {
		if gofunc := md[k]; gofunc >= md[k-1] && section(ef, gofunc) != nil {
			return gofunc
		}
	}
	return 0
}

// section is the allocated data section holding addr, or nil.
func section(ef *elfx.File, addr uint64) *elf.Section {
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_EXECINSTR == 0 &&
			s.Addr <= addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

func inCode(ef *elfx.File, addr uint64) bool {
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr <= addr && addr < s.Addr+s.Size {
			return true
		}
	}
	return false
}

// findTable finds a table the linker merged into another read-only section
// (an external linker does with a position-independent executable's
// .data.rel.ro.gopclntab): its symbol runtime.pclntab when the file has a
// symbol table, else a table header that the module data points at.
func findTable(ef *elfx.File, rel map[uint64]uint64) (data []byte, addr uint64, md []uint64, err error) {
	var cands []uint64
	if syms, err := ef.Symbols(); err == nil {
		for _, s := range syms {
			if s.Name == "runtime.pclntab" {
				cands = append(cands, s.Value)
			}
		}
	}
	for _, sec := range ef.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Flags&elf.SHF_EXECINSTR != 0 {
			continue
		}
		d, err := sec.Data()
		if err != nil {
			continue
		}
		for off := 0; off+8 <= len(d); off += 8 {
			m := binary.LittleEndian.Uint32(d[off:])
			if (m == magic116 || m == magic118 || m == magic120) && d[off+4] == 0 && d[off+5] == 0 && d[off+7] == 8 {
				cands = append(cands, sec.Addr+uint64(off))
			}
		}
	}
	for _, a := range cands {
		md := moduleData(ef, rel, a)
		if md == nil {
			continue
		}
		for _, sec := range ef.Sections {
			if sec.Addr <= a && a < sec.Addr+sec.Size && sec.Type == elf.SHT_PROGBITS {
				d, err := relocated(sec, rel)
				if err != nil {
					return nil, 0, nil, fmt.Errorf("%s: section %s: %v", ef.Path, sec.Name, err)
				}
				return d[a-sec.Addr:], a, md, nil
			}
		}
	}
	return nil, 0, nil, fmt.Errorf("%s: %w: no .gopclntab section and no Go function table that the runtime's module data points at: not a Go binary, or one this reader does not know", ef.Path, ErrNoTable)
}

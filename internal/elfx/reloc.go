package elfx

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
)

// relocator applies the relocations of a relocatable object (a compiler's
// .o, a kernel module) to its DWARF sections, as debug/elf's DWARF does:
// the relocations of the form S + A (symbol plus addend) that DWARF's
// addresses and section offsets use, on the machines debug/elf relocates.
// Kept here so that the DWARF bytes read are at hand (DWARFSection) for an
// object file too.
type relocator struct {
	f    *File
	syms []elf.Symbol
	m    relocMachine
	err  error // why no relocation can be applied
}

// relocMachine is how one machine's relocations are laid out and which
// of them are absolute.
type relocMachine struct {
	class   elf.Class
	machine elf.Machine
	// rela: entries carry their addend (Rela32/Rela64); else (Rel32) the
	// addend is the word being relocated.
	rela bool
	// abs64 and abs32 are the 64- and 32-bit absolute relocation types
	// (0 for none).
	abs64, abs32 []uint32
	// anySym applies relocations to undefined and special symbols too
	// (debug/elf does so for Rel32 machines).
	anySym bool
}

// relocMachines are the machines debug/elf relocates DWARF for, with the
// relocations it applies.
var relocMachines = []relocMachine{
	{elf.ELFCLASS64, elf.EM_X86_64, true, []uint32{uint32(elf.R_X86_64_64)}, []uint32{uint32(elf.R_X86_64_32)}, false},
	{elf.ELFCLASS32, elf.EM_386, false, nil, []uint32{uint32(elf.R_386_32)}, true},
	{elf.ELFCLASS32, elf.EM_ARM, false, nil, []uint32{uint32(elf.R_ARM_ABS32)}, true},
	{elf.ELFCLASS64, elf.EM_AARCH64, true, []uint32{uint32(elf.R_AARCH64_ABS64)}, []uint32{uint32(elf.R_AARCH64_ABS32)}, false},
	{elf.ELFCLASS32, elf.EM_PPC, true, nil, []uint32{uint32(elf.R_PPC_ADDR32)}, false},
	{elf.ELFCLASS64, elf.EM_PPC64, true, []uint32{uint32(elf.R_PPC64_ADDR64)}, []uint32{uint32(elf.R_PPC64_ADDR32)}, false},
	{elf.ELFCLASS32, elf.EM_MIPS, false, nil, []uint32{uint32(elf.R_MIPS_32)}, true},
	{elf.ELFCLASS64, elf.EM_MIPS, true, []uint32{uint32(elf.R_MIPS_64)}, []uint32{uint32(elf.R_MIPS_32)}, false},
	{elf.ELFCLASS64, elf.EM_LOONGARCH, true, []uint32{uint32(elf.R_LARCH_64)}, []uint32{uint32(elf.R_LARCH_32)}, false},
	{elf.ELFCLASS64, elf.EM_RISCV, true, []uint32{uint32(elf.R_RISCV_64)}, []uint32{uint32(elf.R_RISCV_32)}, false},
	{elf.ELFCLASS64, elf.EM_S390, true, []uint32{uint32(elf.R_390_64)}, []uint32{uint32(elf.R_390_32)}, false},
	{elf.ELFCLASS64, elf.EM_SPARCV9, true, []uint32{uint32(elf.R_SPARC_64), uint32(elf.R_SPARC_UA64)},
		[]uint32{uint32(elf.R_SPARC_32), uint32(elf.R_SPARC_UA32)}, false},
}

// newRelocator returns a relocator for f, nil when f is no relocatable
// object. One for a machine debug/elf does not relocate either, or an
// object without a symbol table, fails on the first relocation section
// it meets (as debug/elf's DWARF).
func (f *File) newRelocator() *relocator {
	if f.Type != elf.ET_REL {
		return nil
	}
	r := &relocator{f: f}
	for _, m := range relocMachines {
		if m.class == f.Class && m.machine == f.Machine {
			r.m = m
		}
	}
	if r.m.machine == 0 {
		r.err = fmt.Errorf("relocations of %v %v objects are not applied", f.Class, f.Machine)
	} else {
		r.syms, r.err = f.Symbols()
	}
	return r
}

// entrySize is the size of one relocation entry.
func (r *relocator) entrySize() int {
	switch {
	case r.m.class == elf.ELFCLASS64:
		return 24 // Rela64
	case r.m.rela:
		return 12 // Rela32
	}
	return 8 // Rel32
}

// apply relocates b, the contents of section name (under its .debug_ or
// .zdebug_ name), in place; b is the caller's own copy. A relocation
// section that cannot be read or is not of whole entries is an error, as
// debug/elf's.
func (r *relocator) apply(name string, b []byte) error {
	if s := r.f.dwarfSection(name); s != nil {
		for i, t := range r.f.Sections {
			if t == s {
				return r.applyTo(i, b)
			}
		}
	}
	return nil
}

// applyTo relocates b, the contents of section target, in place.
func (r *relocator) applyTo(target int, b []byte) error {
	size := r.entrySize()
	for _, s := range r.f.Sections {
		if (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) || int(s.Info) != target {
			continue
		}
		rels, err := s.Data()
		if err == nil {
			err = r.err
		}
		if err != nil {
			return Decode(r.f.Path, s.Name, NoOffset, err)
		}
		if len(rels)%size != 0 {
			return Decode(r.f.Path, s.Name, NoOffset, fmt.Errorf("length of relocation section is not a multiple of %d", size))
		}
		for ; len(rels) > 0; rels = rels[size:] {
			r.one(b, rels[:size])
		}
	}
	return nil
}

// one applies the relocation entry e to b, or nothing for a relocation of
// another type or a symbol that is undefined or of a special section (as
// debug/elf).
func (r *relocator) one(b, e []byte) {
	order := r.f.ByteOrder
	var off, symNo uint64
	var typ uint32
	var addend int64
	switch r.entrySize() {
	case 24:
		info := order.Uint64(e[8:])
		off, addend = order.Uint64(e), int64(order.Uint64(e[16:]))
		symNo, typ = info>>32, uint32(info&0xffff)
		if r.m.machine == elf.EM_MIPS {
			symNo, typ = info>>32, uint32(info&0xff)
			if order == binary.LittleEndian {
				symNo, typ = info&0xffffffff, uint32(info>>56)
			}
		} else if r.m.machine == elf.EM_SPARCV9 {
			typ = uint32(info & 0xff)
		}
	case 12:
		info := order.Uint32(e[4:])
		off, addend = uint64(order.Uint32(e)), int64(int32(order.Uint32(e[8:])))
		symNo, typ = uint64(info>>8), info&0xff
	default:
		info := order.Uint32(e[4:])
		off = uint64(order.Uint32(e))
		symNo, typ = uint64(info>>8), info&0xff
	}
	if symNo == 0 || symNo > uint64(len(r.syms)) {
		return
	}
	sym := &r.syms[symNo-1]
	if !r.m.anySym && (sym.Section == elf.SHN_UNDEF || sym.Section >= elf.SHN_LORESERVE) {
		return
	}
	switch {
	case has(r.m.abs64, typ):
		putUint(order, b, off, 8, sym.Value, addend, !r.m.rela)
	case has(r.m.abs32, typ):
		putUint(order, b, off, 4, sym.Value, addend, !r.m.rela)
	}
}

func has(list []uint32, v uint32) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// putUint writes sym + addend (plus, with inPlace, the word already
// there) to b[off:off+size], as debug/elf: nothing for a negative
// addend or a word past the end.
func putUint(order binary.ByteOrder, b []byte, off, size, sym uint64, addend int64, inPlace bool) {
	if off+size > uint64(len(b)) || math.MaxUint64-off < size || addend < 0 {
		return
	}
	w := b[off : off+size]
	if size == 4 {
		a := uint32(addend)
		if inPlace {
			a += order.Uint32(w)
		}
		order.PutUint32(w, uint32(sym)+a)
		return
	}
	a := uint64(addend)
	if inPlace {
		a += order.Uint64(w)
	}
	order.PutUint64(w, sym+a)
}

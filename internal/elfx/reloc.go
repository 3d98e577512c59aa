package elfx

import (
	"debug/elf"
	"errors"
	"math"
)

var errRelaSize = errors.New("length of relocation section is not a multiple of 24")

// relocator applies the relocations of a relocatable object (a compiler's
// .o, a kernel module) to its DWARF sections, as debug/elf's DWARF does:
// the relocations of the form S + A (symbol plus addend) that DWARF's
// addresses and section offsets use, on the machines whose tables the
// project has (x86-64, arm64). Kept here so that the DWARF bytes read are
// at hand (DWARFSection) for an object file too.
type relocator struct {
	f    *File
	syms []elf.Symbol
	// abs64 and abs32 are the machine's 64- and 32-bit absolute
	// relocation types.
	abs64, abs32 uint32
}

// newRelocator returns a relocator for f, false when f is no relocatable
// object of a machine it knows or has no symbol table.
func (f *File) newRelocator() (*relocator, bool) {
	if f.Type != elf.ET_REL || f.Class != elf.ELFCLASS64 {
		return nil, false
	}
	r := &relocator{f: f}
	switch f.Machine {
	case elf.EM_X86_64:
		r.abs64, r.abs32 = uint32(elf.R_X86_64_64), uint32(elf.R_X86_64_32)
	case elf.EM_AARCH64:
		r.abs64, r.abs32 = uint32(elf.R_AARCH64_ABS64), uint32(elf.R_AARCH64_ABS32)
	default:
		return nil, false
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, false
	}
	r.syms = syms
	return r, true
}

// apply relocates b, the contents of section name, in place; b is the
// caller's own copy. A relocation section that cannot be read or is not
// of whole entries is an error, as debug/elf's.
func (r *relocator) apply(name string, b []byte) error {
	target := -1
	for i, s := range r.f.Sections {
		if s.Name == name {
			target = i
			break
		}
	}
	for _, s := range r.f.Sections {
		if (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) || int(s.Info) != target {
			continue
		}
		rels, err := s.Data()
		if err != nil {
			return Decode(r.f.Path, s.Name, NoOffset, err)
		}
		if len(rels)%24 != 0 { // Rela64
			return Decode(r.f.Path, s.Name, NoOffset, errRelaSize)
		}
		for ; len(rels) > 0; rels = rels[24:] {
			r.one(b, rels[:24])
		}
	}
	return nil
}

// one applies the Rela64 entry rela to b, or nothing for a relocation of
// another type or a symbol that is undefined or of a special section (as
// debug/elf).
func (r *relocator) one(b, rela []byte) {
	order := r.f.ByteOrder
	off, info, addend := order.Uint64(rela), order.Uint64(rela[8:]), int64(order.Uint64(rela[16:]))
	symNo, typ := info>>32, uint32(info&0xffff)
	if symNo == 0 || symNo > uint64(len(r.syms)) {
		return
	}
	sym := &r.syms[symNo-1]
	if sym.Section == elf.SHN_UNDEF || sym.Section >= elf.SHN_LORESERVE || addend < 0 {
		return
	}
	switch typ {
	case r.abs64:
		if off+8 <= uint64(len(b)) && math.MaxUint64-off >= 8 {
			order.PutUint64(b[off:], sym.Value+uint64(addend))
		}
	case r.abs32:
		if off+4 <= uint64(len(b)) && math.MaxUint64-off >= 4 {
			order.PutUint32(b[off:], uint32(sym.Value)+uint32(addend))
		}
	}
}

package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// Section is one section of an ELF image Build writes. Link names the
// section sh_link points to ("" for none).
type Section struct {
	Name    string
	Type    elf.SectionType
	Flags   elf.SectionFlag
	Addr    uint64
	Link    string
	Info    uint32
	Align   uint64
	Entsize uint64
	Data    []byte
}

// Build writes an ELF64 image holding sections, no segments, for the
// machine and byte order of like, and opens it as a File named name: how
// a debug file assembled in memory (split DWARF joined to its skeletons)
// is read through the same path as one on disk. Compressed sections must
// be given inflated; the flag SHF_COMPRESSED is cleared.
func Build(name string, like *File, sections []Section) (*File, error) {
	if like.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: a 32-bit ELF file: split DWARF is read for 64-bit files only", like.Path)
	}
	order := like.ByteOrder
	const ehSize, shSize = 64, 64
	index := map[string]int{}
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	names := make([]uint32, len(sections)+1)
	for i, s := range sections {
		index[s.Name] = i + 1
		names[i] = uint32(shstr.Len())
		shstr.WriteString(s.Name)
		shstr.WriteByte(0)
	}
	names[len(sections)] = uint32(shstr.Len())
	shstr.WriteString(".shstrtab\x00")
	all := append(append([]Section(nil), sections...), Section{Name: ".shstrtab", Type: elf.SHT_STRTAB, Align: 1, Data: shstr.Bytes()})

	var body bytes.Buffer
	body.Write(make([]byte, ehSize))
	offs := make([]uint64, len(all))
	for i, s := range all {
		for body.Len()%8 != 0 {
			body.WriteByte(0)
		}
		offs[i] = uint64(body.Len())
		body.Write(s.Data)
	}
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(body.Len())
	body.Write(make([]byte, shSize)) // SHT_NULL
	sh := make([]byte, shSize)
	for i, s := range all {
		link := uint32(0)
		if s.Link != "" {
			link = uint32(index[s.Link])
		}
		order.PutUint32(sh[0:], names[i])
		order.PutUint32(sh[4:], uint32(s.Type))
		order.PutUint64(sh[8:], uint64(s.Flags&^elf.SHF_COMPRESSED&^elf.SHF_ALLOC))
		order.PutUint64(sh[16:], s.Addr)
		order.PutUint64(sh[24:], offs[i])
		order.PutUint64(sh[32:], uint64(len(s.Data)))
		order.PutUint32(sh[40:], link)
		order.PutUint32(sh[44:], s.Info)
		order.PutUint64(sh[48:], s.Align)
		order.PutUint64(sh[56:], s.Entsize)
		body.Write(sh)
	}
	img := body.Bytes()
	copy(img, elf.ELFMAG)
	img[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	img[elf.EI_DATA] = byte(like.Data)
	img[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	img[elf.EI_OSABI] = byte(like.OSABI)
	typ := like.Type
	if typ == elf.ET_REL {
		typ = elf.ET_EXEC // nothing left to relocate: the sections are copied as read
	}
	putHeader(img, order, typ, like.Machine, shoff, len(all)+1)
	return NewFile(bytes.NewReader(img), name)
}

func putHeader(img []byte, order binary.ByteOrder, typ elf.Type, machine elf.Machine, shoff uint64, shnum int) {
	order.PutUint16(img[16:], uint16(typ))
	order.PutUint16(img[18:], uint16(machine))
	order.PutUint32(img[20:], uint32(elf.EV_CURRENT))
	order.PutUint64(img[40:], shoff)
	order.PutUint16(img[52:], 64) // e_ehsize
	order.PutUint16(img[58:], 64) // e_shentsize
	order.PutUint16(img[60:], uint16(shnum))
	order.PutUint16(img[62:], uint16(shnum-1)) // .shstrtab, the last
}

// SectionData returns the contents of the named section, inflated, or
// nil and no error when the file has none (or it occupies no bytes).
func (f *File) SectionData(name string) ([]byte, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	b, err := f.sectionBytes(name)
	if err != nil {
		return nil, Decode(f.Path, name, NoOffset, err)
	}
	return b, nil
}

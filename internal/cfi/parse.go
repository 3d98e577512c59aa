package cfi

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/binscope/binscope/internal/leb128"
)

// machine is what the parser needs to know of the file.
type machine struct {
	order    binary.ByteOrder
	addrSize int    // the ELF class's pointer size, 4 or 8
	fp       uint64 // the frame pointer's DWARF register number
	plt      bool   // x86-64: recognise the PLT CFA expression
	// Bases of DW_EH_PE_textrel and DW_EH_PE_datarel pointers: .text, and
	// the GOT (DT_PLTGOT, as i386's unwinder takes it; x86-64 and AArch64
	// compilers do not emit either form).
	text, data uint64
	// deref reads a pointer of the file's image, for DW_EH_PE_indirect; nil
	// makes such pointers an error.
	deref func(addr uint64, size int) (uint64, bool)
}

// section is one .eh_frame or .debug_frame being parsed.
type section struct {
	*machine
	file, name string
	b          []byte
	addr       uint64 // the section's virtual address, base of DW_EH_PE_pcrel
	eh         bool   // .eh_frame's conventions, else .debug_frame's
	cies       map[int]*cie
}

func newSection(file, name string, b []byte, addr uint64, eh bool, m *machine) *section {
	return &section{machine: m, file: file, name: name, b: b, addr: addr, eh: eh, cies: map[int]*cie{}}
}

func (s *section) errorf(off int, format string, args ...any) error {
	return &DecodeError{File: s.file, Section: s.name, Offset: uint64(off), Err: fmt.Errorf(format, args...)}
}

// reader reads s.b from off up to end. A read past end returns zeros and
// sets bad, which stays set: callers check once per field group.
type reader struct {
	b     []byte
	off   int
	end   int
	order binary.ByteOrder
	bad   bool
}

func (s *section) reader(off, end int) reader {
	return reader{b: s.b, off: off, end: end, order: s.order}
}

func (r *reader) u8() byte {
	if r.off >= r.end {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

// fixed reads an n-byte unsigned number, n being 1, 2, 4 or 8.
func (r *reader) fixed(n int) uint64 {
	if n > r.end-r.off {
		r.bad, r.off = true, r.end
		return 0
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(r.order.Uint16(p))
	case 4:
		return uint64(r.order.Uint32(p))
	}
	return r.order.Uint64(p)
}

// uleb reads an unsigned LEB128 number; bits past the 64th are dropped.
func (r *reader) uleb() uint64 {
	if r.bad {
		return 0
	}
	v, n := leb128.Uint(r.b[r.off:r.end])
	if n == 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

// sleb reads a signed LEB128 number.
func (r *reader) sleb() int64 {
	if r.bad {
		return 0
	}
	v, n := leb128.Int(r.b[r.off:r.end])
	if n == 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *reader) skip(n uint64) {
	if n > uint64(r.end-r.off) {
		r.bad, r.off = true, r.end
		return
	}
	r.off += int(n)
}

// block reads a ULEB128 length and that many bytes.
func (r *reader) block() []byte {
	n := r.uleb()
	start := r.off
	r.skip(n)
	if r.bad {
		return nil
	}
	return r.b[start:r.off]
}

func (r *reader) cstring() []byte {
	i := bytes.IndexByte(r.b[r.off:r.end], 0)
	if i < 0 {
		r.bad, r.off = true, r.end
		return nil
	}
	s := r.b[r.off : r.off+i]
	r.off += i + 1
	return s
}

// parse reads every entry of the section and adds its FDEs to b. Each
// step moves past an entry of at least four bytes, so the walk ends.
func (s *section) parse(b *builder, sec int) error {
	for off := 0; off < len(s.b); {
		r := s.reader(off, len(s.b))
		length, wide := r.fixed(4), false
		if length == 0xffffffff {
			length, wide = r.fixed(8), true
		}
		if r.bad {
			return s.errorf(off, "truncated entry length")
		}
		if length == 0 {
			// .eh_frame's terminator (readelf and LLVM read on past it,
			// as linkers may concatenate terminated sections), or padding.
			off = r.off
			continue
		}
		if length > uint64(len(s.b)-r.off) {
			return s.errorf(off, "entry length %#x runs past the section's end (%#x bytes left)", length, len(s.b)-r.off)
		}
		end := r.off + int(length)
		r.end = end
		idOff := r.off
		// .eh_frame's CIE pointer is 4 bytes even after a 64-bit length
		// (Linux Standard Base); .debug_frame's is an offset of the format.
		idSize := 4
		if wide && !s.eh {
			idSize = 8
		}
		id := r.fixed(idSize)
		if r.bad {
			return s.errorf(off, "entry of %d bytes is shorter than its CIE pointer", length)
		}
		if s.isCIE(id, idSize) {
			off = end
			continue // read when an FDE names it
		}
		cieOff := id
		if s.eh {
			if id > uint64(idOff) {
				return s.errorf(off, "FDE's CIE pointer %#x points before the section's start", id)
			}
			cieOff = uint64(idOff) - id
		}
		if cieOff >= uint64(len(s.b)) {
			return s.errorf(off, "FDE's CIE at %#x is past the section's end", cieOff)
		}
		c, err := s.cie(int(cieOff))
		if err != nil {
			return err
		}
		if err := s.fde(off, &r, c, b, sec); err != nil {
			return err
		}
		off = end
	}
	return nil
}

func (s *section) isCIE(id uint64, idSize int) bool {
	if s.eh {
		return id == 0
	}
	if idSize == 4 {
		return id == 0xffffffff
	}
	return id == ^uint64(0)
}

// cie is a common information entry.
type cie struct {
	codeAlign  uint64
	dataAlign  int64
	ra         uint64 // the return address column
	addrSize   int    // DW_EH_PE_absptr's size
	segSize    int    // bytes of segment selector before an FDE's address
	fdeEnc     byte   // encoding of FDE addresses
	z          bool   // FDEs carry augmentation data
	init       regs   // the rules after the initial instructions
	prog, pend int    // the initial instructions' offsets
}

// cie reads (once) the CIE at off.
func (s *section) cie(off int) (*cie, error) {
	if c, ok := s.cies[off]; ok {
		return c, nil
	}
	r := s.reader(off, len(s.b))
	length, idSize := r.fixed(4), 4
	if length == 0xffffffff {
		length, idSize = r.fixed(8), 8
		if s.eh {
			idSize = 4
		}
	}
	if r.bad || length == 0 || length > uint64(len(s.b)-r.off) {
		return nil, s.errorf(off, "FDE names a CIE here, which has no valid length")
	}
	r.end = r.off + int(length)
	if id := r.fixed(idSize); r.bad || !s.isCIE(id, idSize) {
		return nil, s.errorf(off, "FDE names a CIE here, which is not a CIE")
	}
	c := &cie{addrSize: s.addrSize}
	version := r.u8()
	aug := r.cstring()
	if r.bad {
		return nil, s.errorf(off, "truncated CIE")
	}
	if version != 1 && version != 3 && version != 4 {
		return nil, s.errorf(off, "CIE version %d (want 1, 3 or 4)", version)
	}
	if bytes.HasPrefix(aug, []byte("eh")) {
		// GCC 2's "eh": the address of an exception table follows.
		r.skip(uint64(s.addrSize))
		aug = aug[2:]
	}
	if version == 4 {
		c.addrSize, c.segSize = int(r.u8()), int(r.u8())
		if !r.bad && c.addrSize != 2 && c.addrSize != 4 && c.addrSize != 8 {
			return nil, s.errorf(off, "CIE address size %d (want 2, 4 or 8)", c.addrSize)
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.ra = uint64(r.u8())
	} else {
		c.ra = r.uleb()
	}
	if r.bad {
		return nil, s.errorf(off, "truncated CIE")
	}
	if len(aug) > 0 {
		if aug[0] != 'z' {
			return nil, s.errorf(off, "CIE augmentation %q is not understood", aug)
		}
		if err := s.augmentation(off, &r, c, aug[1:]); err != nil {
			return nil, err
		}
	}
	c.prog, c.pend = r.off, r.end
	c.init = regs{ra: Rule{Kind: SameValue}, fp: Rule{Kind: SameValue}}
	var m interp
	if err := m.cieProgram(s, c); err != nil {
		return nil, err
	}
	s.cies[off] = c
	return c, nil
}

// augmentation reads the data a "z" augmentation string describes: R, the
// FDE pointer encoding; P, the personality routine (skipped); L, the LSDA
// encoding (the LSDA lives in FDEs, skipped); S (a signal frame), B
// (AArch64 BTI) and G (AArch64 MTE) carry no data. A letter it does not
// know ends the reading: the data's length lets it be skipped whole.
func (s *section) augmentation(off int, r *reader, c *cie, aug []byte) error {
	c.z = true
	n := r.uleb()
	start := r.off
	r.skip(n)
	if r.bad {
		return s.errorf(off, "truncated CIE augmentation data")
	}
	d := s.reader(start, r.off)
	for _, ch := range aug {
		switch ch {
		case 'R':
			c.fdeEnc = d.u8()
			if !validEncoding(c.fdeEnc) || c.fdeEnc == encOmit {
				return s.errorf(off, "FDE pointer encoding %#x", c.fdeEnc)
			}
		case 'L':
			if enc := d.u8(); !validEncoding(enc) {
				return s.errorf(off, "LSDA pointer encoding %#x", enc)
			}
		case 'P':
			enc := d.u8()
			if !validEncoding(enc) {
				return s.errorf(off, "personality pointer encoding %#x", enc)
			}
			if _, msg := s.pointer(&d, enc, c.addrSize, 0, false); msg != "" {
				return s.errorf(off, "personality pointer: %s", msg)
			}
		case 'S', 'B', 'G':
		default:
			return nil
		}
		if d.bad {
			return s.errorf(off, "truncated CIE augmentation data")
		}
	}
	return nil
}

// fde reads the header of the FDE whose CIE pointer r has just read and
// adds it to b; its program runs once the FDEs are placed.
func (s *section) fde(off int, r *reader, c *cie, b *builder, sec int) error {
	r.skip(uint64(c.segSize))
	lo, msg := s.pointer(r, c.fdeEnc, c.addrSize, 0, true)
	if msg != "" {
		return s.errorf(off, "FDE address: %s", msg)
	}
	// The range has the encoding's format but no base.
	n, msg := s.pointer(r, c.fdeEnc&0x0f, c.addrSize, 0, false)
	if msg != "" {
		return s.errorf(off, "FDE range: %s", msg)
	}
	if c.z {
		r.skip(r.uleb()) // the LSDA pointer
		if r.bad {
			return s.errorf(off, "truncated FDE augmentation data")
		}
	}
	if s.addrSize == 4 {
		lo, n = lo&0xffffffff, n&0xffffffff
	}
	if lo == 0 || n == 0 {
		// Code the linker discarded (its address relocated to 0), or an
		// empty function.
		return nil
	}
	if lo+n < lo {
		return s.errorf(off, "FDE range %#x+%#x wraps around", lo, n)
	}
	b.fdes = append(b.fdes, fde{lo: lo, hi: lo + n, prog: r.off, end: r.end, c: c, s: s, sec: sec})
	b.progBytes += r.end - r.off
	return nil
}

// Pointer encodings (DW_EH_PE_*).
const (
	encAbsptr   = 0x00
	encULEB     = 0x01
	encUData2   = 0x02
	encUData4   = 0x03
	encUData8   = 0x04
	encSigned   = 0x08
	encSLEB     = 0x09
	encSData2   = 0x0a
	encSData4   = 0x0b
	encSData8   = 0x0c
	encPCRel    = 0x10
	encTextRel  = 0x20
	encDataRel  = 0x30
	encFuncRel  = 0x40
	encAligned  = 0x50
	encIndirect = 0x80
	encOmit     = 0xff
)

func validEncoding(enc byte) bool {
	if enc == encOmit {
		return true
	}
	switch enc & 0x0f {
	case encAbsptr, encULEB, encUData2, encUData4, encUData8, encSigned, encSLEB, encSData2, encSData4, encSData8:
	default:
		return false
	}
	return enc&0x70 <= encAligned
}

// pointer reads a value in encoding enc (validated) at r, adds the base the
// encoding names (fn is the function's address, for DW_EH_PE_funcrel) and,
// if deref, follows DW_EH_PE_indirect. It returns a message on failure.
func (s *section) pointer(r *reader, enc byte, addrSize int, fn uint64, deref bool) (uint64, string) {
	if enc == encOmit {
		return 0, ""
	}
	at := s.addr + uint64(r.off)
	if enc&0x70 == encAligned {
		pad := (uint64(addrSize) - at%uint64(addrSize)) % uint64(addrSize)
		r.skip(pad)
		at += pad
	}
	var v uint64
	switch enc & 0x0f {
	case encAbsptr:
		v = r.fixed(addrSize)
	case encSigned:
		v = signExtend(r.fixed(addrSize), addrSize)
	case encULEB:
		v = r.uleb()
	case encSLEB:
		v = uint64(r.sleb())
	case encUData2, encUData4, encUData8:
		v = r.fixed(2 << (enc&0x0f - encUData2))
	case encSData2, encSData4, encSData8:
		n := 2 << (enc&0x0f - encSData2)
		v = signExtend(r.fixed(n), n)
	}
	if r.bad {
		return 0, "truncated"
	}
	switch enc & 0x70 {
	case encPCRel:
		v += at
	case encTextRel:
		v += s.text
	case encDataRel:
		v += s.data
	case encFuncRel:
		v += fn
	}
	if enc&encIndirect != 0 && deref {
		if s.deref == nil {
			return 0, fmt.Sprintf("indirect pointer through %#x: no image to read", v)
		}
		p, ok := s.deref(v, s.addrSize)
		if !ok {
			return 0, fmt.Sprintf("indirect pointer through %#x, which is in no loaded segment", v)
		}
		v = p
	}
	return v, ""
}

func signExtend(v uint64, n int) uint64 {
	shift := 64 - 8*uint(n)
	return uint64(int64(v<<shift) >> shift)
}

// Package line decodes DWARF line number programs (.debug_line, DWARF 2
// to 5, 32- and 64-bit): a unit's program header with its directory and
// file tables (New), the rows its program emits (Reader), and the table
// of rows in address order with the address ranges its sequences cover
// (Table). It imports no other package of the project and holds no
// state: the caller passes the sections' bytes and what the unit says
// (DW_AT_comp_dir, its address size), and keeps a unit's Table.
//
// File names are spelled as debug/dwarf's LineFile spells them (a
// relative name joined with its directory, the compilation directory
// for directory 0 before DWARF 5), which the tests check row by row.
// Corrupt input is a *DecodeError naming the section and the offset of
// what cannot be read; no function panics.
package line

import (
	"encoding/binary"
	"fmt"
)

// Sections are the bytes of the sections a line program reads.
type Sections struct {
	Line       []byte // .debug_line
	Str        []byte // .debug_str: paths of DW_FORM_strp
	LineStr    []byte // .debug_line_str: paths of DW_FORM_line_strp
	StrOffsets []byte // .debug_str_offsets: paths of DW_FORM_strx*, from Unit.StrOffsetsBase
	Order      binary.ByteOrder
}

// Unit is what a compile unit tells its line program.
type Unit struct {
	// CompDir is DW_AT_comp_dir: directory 0 before DWARF 5, and the
	// directory relative include directories are under.
	CompDir string
	// AddrSize is the unit header's address size in bytes, the width of
	// DW_LNE_set_address before DWARF 5 (whose header says its own).
	AddrSize int
	// StrOffsetsBase is DW_AT_str_offsets_base, 0 for none: a
	// DW_FORM_strx path without it is "".
	StrOffsetsBase int64
}

// File is an entry of a line program's file table.
type File struct {
	// Name is the path: a relative name joined with its directory.
	Name  string
	Dir   uint64 // index in Program.Dirs
	MTime uint64 // 0 when unknown
	Size  uint64 // bytes; 0 when unknown
	// MD5 is the file's digest when HasMD5 (DW_LNCT_MD5, DWARF 5).
	MD5    [16]byte
	HasMD5 bool
}

// Program is a line program whose header is read.
type Program struct {
	Offset   int64 // of the header in .debug_line
	Version  int   // 2 to 5
	Dwarf64  bool
	AddrSize int // of DW_LNE_set_address's operand
	// The header's parameters of the state machine (DWARF 5 §6.2.4).
	MinInstLength, MaxOpsPerInst int
	DefaultIsStmt                bool
	LineBase, LineRange          int
	OpcodeBase                   int
	OpcodeLengths                []uint8 // operands of standard opcode i at i-1
	// Dirs are the include directories (Dirs[0] is the compilation
	// directory); Files the file table as the header gives it: before
	// DWARF 5 Files[0] is nil (file 0 names no file).
	Dirs  []string
	Files []*File

	sec      *Sections
	prog     []byte // the program's opcodes, after the header
	progOff  int64  // offset of prog in .debug_line
	unitAddr int
}

// Standard opcodes' operand counts: a header that says otherwise is
// corrupt (DW_LNS_fixed_advance_pc, whose operand is no LEB128, aside).
var knownLengths = [...]int8{lnsCopy: 0, lnsAdvancePC: 1, lnsAdvanceLine: 1, lnsSetFile: 1, lnsSetColumn: -1,
	lnsNegateStmt: 0, lnsSetBasicBlock: 0, lnsConstAddPC: 0, lnsFixedAdvancePC: -1,
	lnsSetPrologueEnd: 0, lnsSetEpilogueBegin: 0, lnsSetISA: 1}

// New reads the header of the line program at off in s.Line for unit u.
func New(s *Sections, off int64, u *Unit) (*Program, error) {
	if off < 0 || off >= int64(len(s.Line)) {
		return nil, &DecodeError{".debug_line", off, fmt.Sprintf("line program offset outside the section of %d bytes", len(s.Line))}
	}
	r := &buf{b: s.Line[off:], off: off, order: s.Order}
	bad := func(format string, args ...any) error {
		return &DecodeError{".debug_line", off, fmt.Sprintf(format, args...)}
	}
	p := &Program{Offset: off, sec: s, unitAddr: u.AddrSize}
	length := uint64(r.u32())
	if length == 0xffffffff {
		p.Dwarf64 = true
		length = r.u64()
	} else if length >= 0xfffffff0 {
		return nil, bad("unit length %#x is a reserved value", length)
	}
	if r.err != nil || length > uint64(len(r.b)-r.i) {
		return nil, bad("line program of %d bytes past the section's end (%d bytes)", length, len(s.Line))
	}
	r.b = r.b[:r.i+int(length)]
	p.Version = int(r.u16())
	if r.err == nil && (p.Version < 2 || p.Version > 5) {
		return nil, bad("line program version %d (2 to 5 are read)", p.Version)
	}
	p.AddrSize = u.AddrSize
	if p.Version >= 5 {
		p.AddrSize = int(r.u8())
		r.u8() // segment_selector_size
	}
	hlen := r.offset(p.Dwarf64)
	if r.err != nil || hlen > uint64(len(r.b)-r.i) {
		return nil, bad("header of %d bytes past the program's end", hlen)
	}
	hdrEnd := r.i + int(hlen)
	p.progOff = off + int64(hdrEnd)
	p.prog = r.b[hdrEnd:]
	if p.Version >= 5 {
		// The tables end with the header: a count its bytes cannot
		// hold is corrupt (debug/dwarf allocates what it claims).
		r.b = r.b[:hdrEnd]
	}
	if err := p.readParams(r); err != nil {
		return nil, err
	}
	var err error
	if p.Version < 5 {
		err = p.readTables4(r, u.CompDir)
	} else {
		err = p.readTables5(r, u)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// readParams reads the header's state machine parameters and standard
// opcode lengths.
func (p *Program) readParams(r *buf) error {
	p.MinInstLength = int(r.u8())
	p.MaxOpsPerInst = 1
	if p.Version >= 4 {
		p.MaxOpsPerInst = int(r.u8())
	}
	p.DefaultIsStmt = r.u8() != 0
	p.LineBase = int(int8(r.u8()))
	p.LineRange = int(r.u8())
	p.OpcodeBase = int(r.u8())
	if p.OpcodeBase > 0 {
		p.OpcodeLengths = r.take(p.OpcodeBase - 1)
	}
	switch {
	case r.err != nil:
		return r.err
	case p.MaxOpsPerInst == 0:
		return &DecodeError{".debug_line", p.Offset, "maximum operations per instruction of 0"}
	case p.LineRange == 0:
		return &DecodeError{".debug_line", p.Offset, "line range of 0"}
	}
	for i, n := range p.OpcodeLengths {
		if op := i + 1; op < len(knownLengths) && knownLengths[op] >= 0 && int(knownLengths[op]) != int(n) {
			return &DecodeError{".debug_line", p.Offset, fmt.Sprintf("standard opcode %d with %d operands, not %d", op, n, knownLengths[op])}
		}
	}
	return nil
}

// readTables4 reads the include directories and file names of a DWARF 2
// to 4 header, each table ended by an empty string.
func (p *Program) readTables4(r *buf, compDir string) error {
	p.Dirs = []string{compDir}
	for {
		dir := r.cstring()
		if r.err != nil {
			return r.err
		}
		if dir == "" {
			break
		}
		if !isAbs(dir) {
			dir = join(compDir, dir)
		}
		p.Dirs = append(p.Dirs, dir)
	}
	p.Files = []*File{nil}
	for {
		f, err := readFile4(r, p.Dirs)
		if err != nil || f == nil {
			return err
		}
		p.Files = append(p.Files, f)
	}
}

// readFile4 reads a file entry of a DWARF 2 to 4 header or
// DW_LNE_define_file: nil at the empty name that ends a table.
func readFile4(r *buf, dirs []string) (*File, error) {
	name := r.cstring()
	if r.err != nil || name == "" {
		return nil, r.err
	}
	at := r.i
	f := &File{Dir: r.uleb()}
	if !isAbs(name) {
		if f.Dir >= uint64(len(dirs)) {
			r.fail(at, "file %q in directory %d of %d", name, f.Dir, len(dirs))
			return nil, r.err
		}
		name = join(dirs[f.Dir], name)
	}
	f.Name = name
	f.MTime = r.uleb()
	f.Size = r.uleb()
	return f, r.err
}

// DW_LNCT_* content types and the forms a DWARF 5 entry's fields take.
const (
	lnctPath     = 0x1
	lnctDirIndex = 0x2
	lnctMTime    = 0x3
	lnctSize     = 0x4
	lnctMD5      = 0x5

	formBlock2   = 0x03
	formBlock4   = 0x04
	formData2    = 0x05
	formData4    = 0x06
	formData8    = 0x07
	formString   = 0x08
	formBlock    = 0x09
	formBlock1   = 0x0a
	formData1    = 0x0b
	formSdata    = 0x0d
	formStrp     = 0x0e
	formUdata    = 0x0f
	formSecOff   = 0x17
	formStrx     = 0x1a
	formStrpSup  = 0x1d
	formData16   = 0x1e
	formLineStrp = 0x1f
	formStrx1    = 0x25
	formStrx2    = 0x26
	formStrx3    = 0x27
	formStrx4    = 0x28
)

// entryFormat is a DWARF 5 directory or file entry's fields: pairs of a
// DW_LNCT_* content type and a DW_FORM_*.
type entryFormat [][2]uint64

// readFormat reads an entry format: a count, then the pairs.
func readFormat(r *buf) entryFormat {
	n := int(r.u8())
	ef := make(entryFormat, 0, n)
	for range n {
		ef = append(ef, [2]uint64{r.uleb(), r.uleb()})
	}
	return ef
}

// readTables5 reads the directory and file tables of a DWARF 5 header,
// each an entry format, a count and the entries.
func (p *Program) readTables5(r *buf, u *Unit) error {
	for _, table := range []string{"directory", "file"} {
		at := r.i
		ef := readFormat(r)
		n := r.uleb()
		switch {
		case r.err != nil:
			return r.err
		case n > 0 && len(ef) == 0:
			r.fail(at, "%d %s entries without fields", n, table)
			return r.err
		case n > uint64(len(r.b)-r.i):
			r.fail(at, "%d %s entries in a header of %d bytes", n, table, len(r.b))
			return r.err
		}
		if table == "directory" {
			p.Dirs = make([]string, n)
		} else {
			p.Files = make([]*File, n)
		}
		for i := range n {
			f, err := p.readEntry5(r, ef, u)
			if err != nil {
				return err
			}
			if table == "directory" {
				p.Dirs[i] = f.Name
			} else {
				p.Files[i] = f
			}
		}
	}
	return nil
}

// readEntry5 reads a DWARF 5 directory or file entry of format ef.
func (p *Program) readEntry5(r *buf, ef entryFormat, u *Unit) (*File, error) {
	f := &File{}
	dir := ""
	for _, field := range ef {
		at := r.i
		str, val, data := p.readField(r, field[1], u)
		if r.err != nil {
			return nil, r.err
		}
		switch field[0] {
		case lnctPath:
			f.Name = str
		case lnctDirIndex:
			if val >= uint64(len(p.Dirs)) {
				r.fail(at, "directory index %d of %d", val, len(p.Dirs))
				return nil, r.err
			}
			f.Dir, dir = val, p.Dirs[val]
		case lnctMTime:
			f.MTime = val
		case lnctSize:
			f.Size = val
		case lnctMD5:
			if len(data) == 16 {
				f.MD5, f.HasMD5 = [16]byte(data), true
			}
		}
	}
	if dir != "" && f.Name != "" {
		f.Name = join(dir, f.Name)
	}
	return f, nil
}

// readField reads a field of the given form: a string (a path), a
// constant, or a block (DW_FORM_data16's digest).
func (p *Program) readField(r *buf, form uint64, u *Unit) (str string, val uint64, data []byte) {
	at := r.i
	s := p.sec
	switch form {
	case formString:
		str = r.cstring()
	case formStrp, formLineStrp:
		off := r.offset(p.Dwarf64)
		sec, name := s.Str, ".debug_str"
		if form == formLineStrp {
			sec, name = s.LineStr, ".debug_line_str"
		}
		var ok bool
		if str, ok = stringAt(sec, off); !ok && r.err == nil {
			r.fail(at, "no string at offset %#x of %s (%d bytes)", off, name, len(sec))
		}
	case formStrpSup, formSecOff:
		r.offset(p.Dwarf64) // a supplementary file's strings are not read
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
		str = p.strx(r, form, u)
	case formData1:
		val = uint64(r.u8())
	case formData2:
		val = uint64(r.u16())
	case formData4:
		val = uint64(r.u32())
	case formData8:
		val = r.u64()
	case formData16:
		data = r.take(16)
	case formUdata:
		val = r.uleb()
	case formSdata:
		val = uint64(r.sleb())
	case formBlock:
		data = r.take(int(min(r.uleb(), uint64(len(r.b)+1))))
	case formBlock1:
		data = r.take(int(r.u8()))
	case formBlock2:
		data = r.take(int(r.u16()))
	case formBlock4:
		data = r.take(int(min(uint64(r.u32()), uint64(len(r.b)+1))))
	default:
		r.fail(at, "form %#x in a directory or file entry", form)
	}
	return str, val, data
}

// strx reads a DW_FORM_strx* index and resolves it through the unit's
// string offsets; "" when the unit has none or the index is outside.
func (p *Program) strx(r *buf, form uint64, u *Unit) string {
	var i uint64
	switch form {
	case formStrx:
		i = r.uleb()
	case formStrx1:
		i = uint64(r.u8())
	case formStrx2:
		i = uint64(r.u16())
	case formStrx3:
		i = uint64(r.u24())
	default:
		i = uint64(r.u32())
	}
	size := uint64(4)
	if p.Dwarf64 {
		size = 8
	}
	s := p.sec
	o := uint64(u.StrOffsetsBase) + i*size
	if u.StrOffsetsBase <= 0 || i > uint64(len(s.StrOffsets)) || o+size > uint64(len(s.StrOffsets)) {
		return ""
	}
	var off uint64
	if size == 8 {
		off = s.Order.Uint64(s.StrOffsets[o:])
	} else {
		off = uint64(s.Order.Uint32(s.StrOffsets[o:]))
	}
	str, _ := stringAt(s.Str, off)
	return str
}

package line

import "io"

// Standard (DW_LNS_*) and extended (DW_LNE_*) opcodes.
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsSetPrologueEnd   = 10
	lnsSetEpilogueBegin = 11
	lnsSetISA           = 12

	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lneSetDiscriminator = 4
)

// Row is a row of the line table: the state machine's registers when an
// opcode appends one (DWARF 5 §6.2.2).
type Row struct {
	Addr    uint64
	OpIndex int // the operation within a VLIW instruction; 0 elsewhere
	// File indexes the file table (Reader.Files); it may name no entry.
	File          int
	Line          int // 0 for code of no source line
	Column        int // 0 for the line's left edge
	ISA           int
	Discriminator int
	// View counts the rows before this one at its address since the
	// address was last set or advanced: GCC's location views
	// (DW_AT_GNU_locviews) number them as readelf does.
	View          int
	Stmt          bool // a recommended breakpoint location
	BasicBlock    bool
	PrologueEnd   bool
	EpilogueBegin bool
	// EndSequence marks the address after a sequence's last
	// instruction; only Addr is meaningful with it.
	EndSequence bool
}

// Reader runs a line program, one row at a time.
type Reader struct {
	p     *Program
	r     buf
	files []*File // the header's table, then the files DW_LNE_define_file adds
	st    Row
}

// Reader returns a reader at the start of p's program.
func (p *Program) Reader() *Reader {
	rd := &Reader{p: p, r: buf{b: p.prog, off: p.progOff, order: p.sec.Order}, files: p.Files}
	rd.reset()
	return rd
}

// Files is the file table as of the reader's position: the header's,
// and those DW_LNE_define_file added since.
func (rd *Reader) Files() []*File { return rd.files }

// reset sets the registers to their values at a sequence's start.
func (rd *Reader) reset() {
	rd.st = Row{File: 1, Line: 1, Stmt: rd.p.DefaultIsStmt}
}

// Next sets *row to the next row of the program. It returns io.EOF after
// the last, and a *DecodeError for an opcode it cannot read.
func (rd *Reader) Next(row *Row) error {
	r := &rd.r
	p := rd.p
	for r.err == nil && r.i < len(r.b) {
		at := r.i
		op := int(r.b[r.i])
		r.i++
		if op >= p.OpcodeBase { // special opcode
			adj := op - p.OpcodeBase
			rd.advance(adj / p.LineRange)
			rd.st.Line += p.LineBase + adj%p.LineRange
			rd.emit(row)
			return nil
		}
		switch op {
		case 0:
			if rd.extended(row, at) {
				return nil
			}
		case lnsCopy:
			rd.emit(row)
			return nil
		case lnsAdvancePC:
			rd.advance(int(r.uleb()))
		case lnsAdvanceLine:
			rd.st.Line += int(r.sleb())
		case lnsSetFile:
			rd.st.File = int(r.uleb())
		case lnsSetColumn:
			rd.st.Column = int(r.uleb())
		case lnsNegateStmt:
			rd.st.Stmt = !rd.st.Stmt
		case lnsSetBasicBlock:
			rd.st.BasicBlock = true
		case lnsConstAddPC:
			rd.advance((255 - p.OpcodeBase) / p.LineRange)
		case lnsFixedAdvancePC:
			if d := r.u16(); d != 0 || rd.st.OpIndex != 0 {
				rd.st.Addr += uint64(d)
				rd.st.OpIndex, rd.st.View = 0, 0
			}
		case lnsSetPrologueEnd:
			rd.st.PrologueEnd = true
		case lnsSetEpilogueBegin:
			rd.st.EpilogueBegin = true
		case lnsSetISA:
			rd.st.ISA = int(r.uleb())
		default: // a standard opcode of a later version: skip its operands
			for range p.OpcodeLengths[op-1] {
				r.uleb()
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	return io.EOF
}

// extended runs the extended opcode at at (its 0 read); it reports
// whether it set *row (DW_LNE_end_sequence).
func (rd *Reader) extended(row *Row, at int) bool {
	r := &rd.r
	n := r.uleb()
	start := r.i
	if r.err != nil || n == 0 || n > uint64(len(r.b)-start) {
		r.fail(at, "extended opcode of %d bytes in %d", n, len(r.b)-start)
		return false
	}
	end := start + int(n)
	switch r.u8() {
	case lneEndSequence:
		rd.st.EndSequence = true
		*row = rd.st
		rd.reset()
		r.i = end
		return true
	case lneSetAddress:
		switch rd.p.AddrSize {
		case 1:
			rd.st.Addr = uint64(r.u8())
		case 2:
			rd.st.Addr = uint64(r.u16())
		case 4:
			rd.st.Addr = uint64(r.u32())
		case 8:
			rd.st.Addr = r.u64()
		default:
			r.fail(at, "address size %d", rd.p.AddrSize)
		}
		rd.st.OpIndex, rd.st.View = 0, 0
	case lneDefineFile:
		f, err := readFile4(r, rd.p.Dirs)
		if err == nil && f == nil {
			r.fail(at, "DW_LNE_define_file without a name")
		}
		if r.err == nil {
			// A copy: the header's table is shared by every reader.
			rd.files = append(rd.files[:len(rd.files):len(rd.files)], f)
		}
	case lneSetDiscriminator:
		rd.st.Discriminator = int(r.uleb())
	}
	if r.err == nil && r.i > end {
		r.fail(at, "extended opcode of %d bytes read past its end", n)
	}
	r.i = max(r.i, end)
	return false
}

// advance moves the operation pointer (address and op index) by ops
// operations; moving it starts the count of views over.
func (rd *Reader) advance(ops int) {
	if ops == 0 {
		return
	}
	rd.st.View = 0
	p := rd.p
	if p.MaxOpsPerInst == 1 {
		rd.st.Addr += uint64(p.MinInstLength * ops)
		return
	}
	i := rd.st.OpIndex + ops
	rd.st.Addr += uint64(p.MinInstLength * (i / p.MaxOpsPerInst))
	rd.st.OpIndex = i % p.MaxOpsPerInst
}

// emit sets *row to the registers, then clears those that last one row.
func (rd *Reader) emit(row *Row) {
	*row = rd.st
	rd.st.View++
	rd.st.BasicBlock = false
	rd.st.PrologueEnd = false
	rd.st.EpilogueBegin = false
	rd.st.Discriminator = 0
}

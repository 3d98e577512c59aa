// Package cfi reads DWARF call frame information (.eh_frame and
// .debug_frame) and compiles it into flat unwind rows: for every address a
// function's code covers, how to find the canonical frame address (CFA), the
// caller's return address and the caller's frame pointer. A BPF stack
// unwinder looks rows up by address; only the columns it needs are kept.
//
// Addresses are the file's virtual addresses (as the ELF file states them,
// before any load bias); offsets are in bytes.
//
// A worked example: gcc -O2 -fomit-frame-pointer gives a function that
// pushes rbx and reserves 16 bytes the rows
//
//	PC       CFA      RA          FP
//	0x1140   rsp+8    Offset -8   SameValue   (first instruction)
//	0x1141   rsp+16   Offset -8   SameValue   (after push %rbx)
//	0x1145   rsp+32   Offset -8   SameValue   (after sub $16,%rsp)
//	...
//	0x1190   (Covered false: the function ends, no FDE follows)
//
// so at 0x1147 the caller's stack pointer is CFA = rsp+32 and its return
// address is the 8 bytes at CFA-8.
package cfi

import (
	"debug/elf"
	"fmt"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
)

// RuleKind says where a register of the caller is.
type RuleKind uint8

const (
	// Unknown: nothing is known. It is the zero value, so a gap row
	// (Covered false) claims nothing about any register.
	Unknown RuleKind = iota
	// Undefined: the value is lost. For the return address it means there
	// is no caller: the outermost frame (_start, a thread's entry).
	Undefined
	// SameValue: the register still holds the caller's value. It is also
	// the rule of a column the call frame information never mentions: the
	// frame pointer is callee-saved, and an unmentioned return address
	// column (AArch64's x30 in a leaf function) still holds the return
	// address.
	SameValue
	// Offset: saved in memory at CFA + Offset.
	Offset
	// ValOffset: the value itself is CFA + Offset.
	ValOffset
	// Register: held in register Reg (a DWARF register number).
	Register
	// Expression: given by a DWARF expression (DW_CFA_expression or
	// DW_CFA_val_expression), which the unwinder does not evaluate.
	Expression
)

var kindNames = [...]string{"unknown", "undefined", "same", "offset", "val_offset", "register", "expression"}

func (k RuleKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("RuleKind(%d)", uint8(k))
}

// Rule is where a register of the caller is: see RuleKind. Reg is a DWARF
// register number (Register only); Offset is in bytes from the CFA (Offset
// and ValOffset only), already multiplied by the CIE's data alignment
// factor.
type Rule struct {
	Kind   RuleKind
	Reg    uint16
	Offset int64
}

func (r Rule) String() string {
	switch r.Kind {
	case Offset:
		return fmt.Sprintf("[CFA%+d]", r.Offset)
	case ValOffset:
		return fmt.Sprintf("CFA%+d", r.Offset)
	case Register:
		return fmt.Sprintf("r%d", r.Reg)
	}
	return r.Kind.String()
}

// CFA is how the canonical frame address (the caller's stack pointer
// before the call) is found: the value of DWARF register Reg plus Offset
// bytes, or, when Expr is set, a DWARF expression the unwinder cannot
// evaluate in general.
//
// One expression is understood: the one GCC and GNU ld give x86-64 lazy PLT
// entries (16 bytes each, a push of the relocation index in the middle).
// PLT is then set, Reg is rsp (7) and Offset 8, and the CFA is
//
//	rsp + 8 + ((rip & 15) >= PLTFrom ? 8 : 0)
//
// PLTFrom is 11 for the classic entry (jmp *GOT; push; jmp) and 10 where the
// expression says so (ld's variant for entries laid out differently).
type CFA struct {
	Offset  int64 // first: a Row packs into 64 bytes
	Reg     uint16
	Expr    bool
	PLT     bool
	PLTFrom uint8
}

func (c CFA) String() string {
	switch {
	case c.PLT:
		return fmt.Sprintf("plt(r%d%+d, from %d)", c.Reg, c.Offset, c.PLTFrom)
	case c.Expr:
		return "expr"
	}
	return fmt.Sprintf("r%d%+d", c.Reg, c.Offset)
}

// Row is the unwind rule set from PC (a virtual address) up to the next
// row's PC.
type Row struct {
	PC  uint64
	CFA CFA
	RA  Rule // the return address column (the CIE's return_address_register)
	FP  Rule // rbp (DWARF 6) on amd64, x29 on arm64
	// Covered is false for a gap that no FDE describes: such a row only
	// ends the FDE before it, and its rules are Unknown.
	Covered bool
}

func (r Row) sameRules(o Row) bool {
	return r.CFA == o.CFA && r.RA == o.RA && r.FP == o.FP && r.Covered == o.Covered
}

// DecodeError is corrupt or unsupported call frame information: Offset is
// the byte offset in Section (after decompression) of the entry or the
// instruction that could not be read.
type DecodeError = elfx.DecodeError

// fpRegister names each machine's frame pointer in its arch table.
var fpRegister = map[elf.Machine]string{elf.EM_X86_64: "RBP", elf.EM_AARCH64: "X29"}

// Table reads f's .eh_frame and .debug_frame (or .zdebug_frame) and returns
// rows sorted by PC. Where both sections describe an address, .eh_frame's
// rule is kept (it is what the program's own unwinder uses); where FDEs of
// one section overlap, the one at the lower address wins. Adjacent rows with
// identical rules are merged, and every FDE not immediately followed by
// another ends with a Covered=false row at its end address.
//
// Only the programs of FDEs that end up in the table run: an FDE that
// another hides entirely is not interpreted.
//
// A file with neither section (a stripped Go binary) gives no rows and no
// error. Errors are a *DecodeError for corrupt sections, an error wrapping
// arch.ErrUnsupportedArch for a machine other than amd64 and arm64, and an
// error for a relocatable object (its pointers are not yet relocated).
func Table(f *elfx.File) ([]Row, error) {
	b, err := load(f)
	if err != nil {
		return nil, err
	}
	return b.table()
}

// load reads the FDEs of f's .eh_frame and .debug_frame.
func load(f *elfx.File) (*builder, error) {
	a, err := arch.ForMachine(f.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: call frame information: %w", f.Path, err)
	}
	fp, ok := a.RegNumber(fpRegister[f.Machine])
	if !ok {
		return nil, fmt.Errorf("%s: call frame information: %w: no frame pointer register", f.Path, arch.ErrUnsupportedArch)
	}
	if f.Type == elf.ET_REL {
		return nil, fmt.Errorf("%s: a relocatable object's call frame information is not relocated: link it first", f.Path)
	}
	m := machine{
		order:    f.ByteOrder,
		addrSize: int(f.PointerSize()),
		fp:       uint64(fp),
		plt:      f.Machine == elf.EM_X86_64,
		text:     sectionAddr(f, ".text"),
		data:     sectionAddr(f, ".got.plt", ".got"),
		deref:    func(addr uint64, size int) (uint64, bool) { return readAddr(f, addr, size) },
	}
	var b builder
	for i, name := range []string{".eh_frame", ".debug_frame"} {
		data, addr, err := sectionData(f, name)
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		s := newSection(f.Path, name, data, addr, i == 0, &m)
		if err := s.parse(&b, i); err != nil {
			return nil, err
		}
	}
	return &b, nil
}

// Lookup returns the row that holds for pc (a virtual address of the file);
// ok is false outside every FDE.
func Lookup(rows []Row, pc uint64) (row Row, ok bool) {
	i, j := 0, len(rows)
	for i < j {
		h := int(uint(i+j) >> 1)
		if rows[h].PC <= pc {
			i = h + 1
		} else {
			j = h
		}
	}
	if i == 0 || !rows[i-1].Covered {
		return Row{}, false
	}
	return rows[i-1], true
}

// sectionAddr is the address of the first of names the file has, or 0.
func sectionAddr(f *elfx.File, names ...string) uint64 {
	for _, n := range names {
		if s := f.Section(n); s != nil {
			return s.Addr
		}
	}
	return 0
}

// readAddr reads a size-byte pointer at virtual address addr of the
// file's image (DW_EH_PE_indirect pointers name a slot there).
func readAddr(f *elfx.File, addr uint64, size int) (uint64, bool) {
	b, err := f.Code(addr, uint64(size))
	if err != nil {
		return 0, false
	}
	if size == 4 {
		return uint64(f.ByteOrder.Uint32(b)), true
	}
	return f.ByteOrder.Uint64(b), true
}

// maxSection bounds a decompressed section (1 GiB).
const maxSection = 1 << 30

// sectionData returns the contents of section name (decompressed by
// debug/elf: SHF_COMPRESSED sections, and GNU .zdebug_ ones, looked for when
// the plain one is missing) and its address; nil when the file has no such
// section or it has no contents (SHT_NOBITS in a separate debug file).
func sectionData(f *elfx.File, name string) (data []byte, addr uint64, err error) {
	s := f.Section(name)
	if s == nil && name != ".eh_frame" {
		name = ".z" + name[1:]
		s = f.Section(name)
	}
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, 0, nil
	}
	fail := func(format string, args ...any) error {
		return &DecodeError{File: f.Path, Section: name, Offset: elfx.NoOffset, Err: fmt.Errorf(format, args...)}
	}
	if s.Flags&elf.SHF_COMPRESSED == 0 && s.Size > maxSection {
		return nil, 0, fail("section of %d bytes is too large", s.Size)
	}
	// debug/elf can panic on a corrupt compression header.
	err = elfx.Guard(f.Path, name, func() (err error) {
		data, err = s.Data()
		return err
	})
	if err != nil {
		return nil, 0, elfx.Decode(f.Path, name, elfx.NoOffset, fmt.Errorf("reading the section: %w", err))
	}
	if len(data) > maxSection {
		return nil, 0, fail("section of %d bytes is too large", len(data))
	}
	return data, s.Addr, nil
}

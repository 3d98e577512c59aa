// Package cfi reads DWARF call frame information (.eh_frame and
// .debug_frame) and compiles it into flat unwind rows: for every address
// a function's code covers, how to find the canonical frame address (CFA),
// the caller's return address and the caller's frame pointer. A BPF stack
// unwinder looks rows up by address; only the columns it needs are kept.
//
// Addresses are the file's virtual addresses; offsets are in bytes.
package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/binscope/binscope/internal/elfx"
)

// RuleKind says where a register of the caller is.
type RuleKind uint8

const (
	// SameValue: the register still holds the caller's value (the rule
	// of callee-saved registers a function does not touch).
	SameValue RuleKind = iota
	// Undefined: the value is lost; for the return address, there is no
	// caller (the outermost frame).
	Undefined
	// Offset: saved at CFA + Offset.
	Offset
	// ValOffset: the value is CFA + Offset.
	ValOffset
	// Register: held in register Reg.
	Register
	// Expression: given by a DWARF expression, which the unwinder does not
	// evaluate.
	Expression
)

func (k RuleKind) String() string {
	return [...]string{"same", "undefined", "offset", "val_offset", "register", "expression"}[k]
}

// Rule is where a register of the caller is.
type Rule struct {
	Kind   RuleKind
	Reg    uint16
	Offset int64
}

// CFA is how the canonical frame address is found: Reg + Offset, or an
// expression (Expr), of which only the one x86-64 PLT entries use is
// understood (PLT: CFA = rsp + 8, plus 8 once past the entry's push, which
// is at byte 11 of its 16).
type CFA struct {
	Reg    uint16
	Offset int64
	Expr   bool
	PLT    bool
}

// Row is the rule set from PC up to the next row's PC.
type Row struct {
	PC  uint64
	CFA CFA
	RA  Rule // the return address column (the CIE's)
	FP  Rule // rbp on amd64, x29 on arm64
	// Covered is false for a gap that no FDE describes: the row only ends
	// the FDE before it.
	Covered bool
}

// fpColumn is the frame pointer's DWARF register number per machine.
func fpColumn(m elf.Machine) (uint16, error) {
	switch m {
	case elf.EM_X86_64:
		return 6, nil
	case elf.EM_AARCH64:
		return 29, nil
	}
	return 0, fmt.Errorf("cfi: unsupported machine %v", m)
}

// Table reads f's .eh_frame and .debug_frame (where both describe an
// address, .eh_frame's rule is kept) and returns rows sorted by PC,
// adjacent identical rows merged, and a Covered=false row at the end of
// every FDE not immediately followed by another. A file with neither
// section gives no rows and no error.
func Table(f *elfx.File) (rows []Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("%s: corrupt call frame information: %v", f.Path, p)
		}
	}()
	fp, err := fpColumn(f.Machine)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Path, err)
	}
	var fdes []fde
	for _, name := range []string{".eh_frame", ".debug_frame"} {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: section %s: %v", f.Path, name, err)
		}
		p := &parser{path: f.Path, section: name, b: b, addr: s.Addr, eh: name == ".eh_frame",
			order: f.ByteOrder, ptrSize: ptrSize(f), fp: fp, cies: map[uint64]*cie{}}
		got, err := p.parse()
		if err != nil {
			return nil, err
		}
		for i := range got {
			got[i].prio = len(fdes) // .eh_frame's come first
		}
		fdes = append(fdes, got...)
	}
	return merge(fdes), nil
}

func ptrSize(f *elfx.File) int {
	if f.Class == elf.ELFCLASS32 {
		return 4
	}
	return 8
}

// Lookup returns the row that holds for pc; ok is false outside every
// FDE.
func Lookup(rows []Row, pc uint64) (Row, bool) {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].PC > pc }) - 1
	if i < 0 || !rows[i].Covered {
		return Row{}, false
	}
	return rows[i], true
}

// fde is one FDE's rows, [lo, hi).
type fde struct {
	lo, hi uint64
	rows   []Row
	prio   int
}

// merge orders FDEs by address, drops those overlapping an earlier
// section's (or an earlier one), marks gaps and merges identical rows.
func merge(fdes []fde) []Row {
	sort.SliceStable(fdes, func(i, j int) bool {
		if fdes[i].lo != fdes[j].lo {
			return fdes[i].lo < fdes[j].lo
		}
		return fdes[i].prio < fdes[j].prio
	})
	var out []Row
	var end uint64
	first := true
	for _, f := range fdes {
		if f.hi <= f.lo || len(f.rows) == 0 {
			continue
		}
		if !first && f.lo < end {
			continue // overlaps what is already there
		}
		if !first && f.lo > end {
			out = append(out, Row{PC: end})
		}
		out = append(out, f.rows...)
		end, first = f.hi, false
	}
	if !first {
		out = append(out, Row{PC: end})
	}
	// Merge: one row per address (the last), then identical neighbours.
	var m []Row
	for _, r := range out {
		if n := len(m); n > 0 && m[n-1].PC == r.PC {
			m[n-1] = r
			continue
		}
		if n := len(m); n > 0 && same(m[n-1], r) {
			continue
		}
		m = append(m, r)
	}
	return m
}

func same(a, b Row) bool {
	return a.CFA == b.CFA && a.RA == b.RA && a.FP == b.FP && a.Covered == b.Covered
}

// cie is a common information entry.
type cie struct {
	codeAlign uint64
	dataAlign int64
	ra        uint16
	enc       byte // FDE pointer encoding
	aug       bool // 'z': FDEs carry augmentation data
	init      []byte
	ptrSize   int
}

type parser struct {
	path, section string
	b             []byte
	addr          uint64 // the section's address, for pc-relative pointers
	eh            bool
	order         binary.ByteOrder
	ptrSize       int
	fp            uint16
	cies          map[uint64]*cie
}

func (p *parser) errorf(off uint64, format string, args ...any) error {
	return fmt.Errorf("%s: section %s at offset %#x: %s", p.path, p.section, off, fmt.Sprintf(format, args...))
}

// parse reads every entry of the section.
func (p *parser) parse() ([]fde, error) {
	var out []fde
	for off := uint64(0); off < uint64(len(p.b)); {
		r := &reader{b: p.b, off: off, order: p.order}
		length, ok := r.u32()
		if !ok {
			return nil, p.errorf(off, "truncated entry length")
		}
		if length == 0xffffffff {
			l64, ok := r.u64()
			if !ok || l64 > uint64(len(p.b))-r.off {
				return nil, p.errorf(off, "64-bit entry length past the section's end")
			}
			end := r.off + l64
			if err := p.entry(off, r, end, true, &out); err != nil {
				return nil, err
			}
			off = end
			continue
		}
		if length == 0 {
			if p.eh {
				break // the terminator
			}
			off = r.off
			continue
		}
		end := r.off + uint64(length)
		if end > uint64(len(p.b)) {
			return nil, p.errorf(off, "entry length %#x past the section's end", length)
		}
		if err := p.entry(off, r, end, false, &out); err != nil {
			return nil, err
		}
		off = end
	}
	return out, nil
}

// entry reads a CIE or an FDE whose id follows at r.
func (p *parser) entry(off uint64, r *reader, end uint64, wide bool, out *[]fde) error {
	idOff := r.off
	var id uint64
	var ok bool
	if wide {
		id, ok = r.u64()
	} else {
		var v uint32
		v, ok = r.u32()
		id = uint64(v)
	}
	if !ok {
		return p.errorf(off, "truncated entry id")
	}
	r.end = end
	isCIE := id == 0 && p.eh || !p.eh && (id == 0xffffffff && !wide || id == ^uint64(0))
	if isCIE {
		c, err := p.cie(off, r)
		if err != nil {
			return err
		}
		p.cies[off] = c
		return nil
	}
	cieOff := id
	if p.eh {
		if id > idOff {
			return p.errorf(off, "CIE pointer %#x before the section's start", id)
		}
		cieOff = idOff - id
	}
	c, ok := p.cies[cieOff]
	if !ok {
		// A CIE after its FDE (allowed in .debug_frame): read it now.
		if cieOff >= uint64(len(p.b)) {
			return p.errorf(off, "FDE names a CIE at %#x past the section's end", cieOff)
		}
		cr := &reader{b: p.b, off: cieOff, order: p.order}
		l, ok := cr.u32()
		if !ok || l == 0 || l == 0xffffffff {
			return p.errorf(off, "FDE names no CIE at %#x", cieOff)
		}
		cend := cr.off + uint64(l)
		if cend > uint64(len(p.b)) {
			return p.errorf(cieOff, "CIE past the section's end")
		}
		cr.u32() // its id
		cr.end = cend
		var err error
		if c, err = p.cie(cieOff, cr); err != nil {
			return err
		}
		p.cies[cieOff] = c
	}
	f, err := p.fde(off, r, c)
	if err != nil {
		return err
	}
	if f != nil {
		*out = append(*out, *f)
	}
	return nil
}

func (p *parser) cie(off uint64, r *reader) (*cie, error) {
	c := &cie{ptrSize: p.ptrSize, enc: encAbsptr}
	version, ok := r.u8()
	if !ok || version != 1 && version != 3 && version != 4 {
		return nil, p.errorf(off, "CIE version %d (want 1, 3 or 4)", version)
	}
	aug, ok := r.cstring()
	if !ok {
		return nil, p.errorf(off, "truncated CIE augmentation")
	}
	if version == 4 {
		as, ok1 := r.u8()
		_, ok2 := r.u8()
		if !ok1 || !ok2 {
			return nil, p.errorf(off, "truncated CIE")
		}
		if as == 4 || as == 8 {
			c.ptrSize = int(as)
		}
	}
	if bytes.HasPrefix(aug, []byte("eh")) {
		return nil, p.errorf(off, "CIE augmentation %q is not supported", aug)
	}
	c.codeAlign, ok = r.uleb()
	if !ok {
		return nil, p.errorf(off, "truncated CIE")
	}
	if c.dataAlign, ok = r.sleb(); !ok {
		return nil, p.errorf(off, "truncated CIE")
	}
	if version == 1 {
		v, ok := r.u8()
		if !ok {
			return nil, p.errorf(off, "truncated CIE")
		}
		c.ra = uint16(v)
	} else {
		v, ok := r.uleb()
		if !ok {
			return nil, p.errorf(off, "truncated CIE")
		}
		c.ra = uint16(v)
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.aug = true
		n, ok := r.uleb()
		if !ok || r.off+n > r.end {
			return nil, p.errorf(off, "truncated CIE augmentation data")
		}
		data := &reader{b: p.b[:r.off+n], off: r.off, end: r.off + n, order: p.order}
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				if c.enc, ok = data.u8(); !ok {
					return nil, p.errorf(off, "truncated CIE augmentation data")
				}
			case 'L':
				if _, ok = data.u8(); !ok {
					return nil, p.errorf(off, "truncated CIE augmentation data")
				}
			case 'P':
				enc, ok := data.u8()
				if !ok {
					return nil, p.errorf(off, "truncated CIE augmentation data")
				}
				if _, ok := p.pointer(data, enc, c.ptrSize); !ok {
					return nil, p.errorf(off, "bad personality pointer")
				}
			case 'S', 'B', 'G':
				// A signal frame; AArch64 BTI and MTE: no data.
			}
		}
		r.off += n
	}
	c.init = p.b[r.off:r.end]
	return c, nil
}

func (p *parser) fde(off uint64, r *reader, c *cie) (*fde, error) {
	enc := c.enc
	if !p.eh {
		enc = encAbsptr
	}
	lo, ok := p.pointer(r, enc, c.ptrSize)
	if !ok {
		return nil, p.errorf(off, "truncated FDE address")
	}
	n, ok := p.pointer(r, enc&0x0f, c.ptrSize)
	if !ok {
		return nil, p.errorf(off, "truncated FDE range")
	}
	if c.aug {
		l, ok := r.uleb()
		if !ok || r.off+l > r.end {
			return nil, p.errorf(off, "truncated FDE augmentation data")
		}
		r.off += l
	}
	if lo == 0 && !p.eh {
		return nil, nil // code the linker discarded
	}
	rows, err := p.run(off, c, p.b[r.off:r.end], lo, lo+n, enc)
	if err != nil {
		return nil, err
	}
	return &fde{lo: lo, hi: lo + n, rows: rows}, nil
}

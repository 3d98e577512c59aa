package dwarf

import (
	"encoding/binary"
	"strings"
	"sync"

	"github.com/binscope/binscope/dwarf/loclist"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/dwexpr"
	"github.com/binscope/binscope/types"
)

// unitCtx is what reading a unit's location lists and .debug_addr indexes
// needs: the DWARF version, the base address (the unit's low_pc) and the
// DWARF 5 section bases.
type unitCtx struct {
	off          Offset
	version      int
	base         uint64
	addrBase     int64
	loclistsBase int64
}

// newUnitCtx reads a compile unit entry.
func (f *File) newUnitCtx(cu *Entry) *unitCtx {
	u := &unitCtx{off: cu.Offset, version: f.unitVersion(cu.Offset)}
	u.base, _ = cu.Uint(AttrLowpc)
	u.addrBase, _ = cu.Int(AttrAddrBase)
	u.loclistsBase, _ = cu.Int(AttrLoclistsBase)
	return u
}

// section returns a debug section's bytes (decompressed), read once; a
// walk on another core waits only for the section it reads.
func (f *File) section(name string) []byte {
	f.cacheMu.Lock()
	sec := f.sections[name]
	if sec == nil {
		if f.sections == nil {
			f.sections = map[string]*sectionBytes{}
		}
		sec = &sectionBytes{}
		f.sections[name] = sec
	}
	f.cacheMu.Unlock()
	sec.once.Do(func() {
		// The sections DWARF read are kept decompressed: .debug_info
		// and .debug_addr are not decompressed twice.
		if sec.b = f.Debug.DWARFSection(name); sec.b != nil {
			return
		}
		if l, err := f.Debug.LazySection(name); err == nil {
			if b, err := l.All(); err == nil {
				sec.b = b
				return
			}
		}
		s := f.Debug.Section(name)
		if s == nil && strings.HasPrefix(name, ".debug_") {
			// Go before 1.21 (the GNU naming of compressed
			// sections): .zdebug_loc, which Data decompresses.
			s = f.Debug.Section(".z" + name[1:])
		}
		if s != nil {
			sec.b, _ = s.Data()
		}
	})
	return sec.b
}

// sectionBytes is a section section read, once.
type sectionBytes struct {
	once sync.Once
	b    []byte
}

// Prefetch reads the named sections on another core, for a walk that
// will need them: location lists for parameters.
func (f *File) Prefetch(names ...string) {
	for _, name := range names {
		if f.Debug.Section(name) != nil {
			go f.section(name)
		}
	}
}

// unitVersion is the DWARF version of the unit whose entry is at off. Only
// location lists need it, and only to choose between .debug_loc and
// .debug_loclists when a file has both (Go code linked with C objects).
func (f *File) unitVersion(off Offset) int {
	hasLoc, hasLists := f.Debug.Section(".debug_loc") != nil, f.Debug.Section(".debug_loclists") != nil
	switch {
	case hasLists && !hasLoc:
		return 5
	case !hasLists:
		return 4
	}
	// A DWARF 5 compile unit header is 12 bytes (32-bit format): length,
	// version, unit type, address size, abbrev offset.
	info := f.section(".debug_info")
	if o := int(off) - 12; o >= 0 && int(off) <= len(info) {
		if v := f.Debug.ByteOrder.Uint16(info[o+4:]); v == 5 && info[o+6] == 1 {
			return 5
		}
	}
	return 4
}

func (f *File) order() binary.ByteOrder { return f.Debug.ByteOrder }

// addrx reads entry i of the unit's .debug_addr table.
func (f *File) addrx(u *unitCtx, i uint64) (uint64, bool) {
	return addrEntry(f.section(".debug_addr"), u.addrBase, i, int(f.ELF.PointerSize()), f.order())
}

// addrEntry is entry i of the .debug_addr table at base in b, of
// addresses size bytes wide.
func addrEntry(b []byte, base int64, i uint64, size int, order binary.ByteOrder) (uint64, bool) {
	sz := uint64(size)
	o := uint64(base) + i*sz
	if base < 0 || (sz != 4 && sz != 8) || o < uint64(base) || o+sz > uint64(len(b)) {
		return 0, false
	}
	if sz == 4 {
		return uint64(order.Uint32(b[o:])), true
	}
	return order.Uint64(b[o:]), true
}

// locAttr is a DW_AT_location (or DW_AT_frame_base) as read: either an
// expression, or a location list.
type locAttr struct {
	expr    []byte
	list    bool
	offset  int64  // DW_FORM_sec_offset
	index   uint64 // DW_FORM_loclistx
	indexed bool
}

func readLocAttr(e *Entry, a Attr) (locAttr, bool) {
	fl := e.AttrField(a)
	if fl == nil {
		return locAttr{}, false
	}
	switch fl.kind {
	case kindBytes:
		return locAttr{expr: fl.b}, true
	case kindInt:
		return locAttr{list: true, offset: int64(fl.n)}, true
	case kindUint:
		if fl.Class() == ClassLocList {
			return locAttr{list: true, index: fl.n, indexed: true}, true
		}
	}
	return locAttr{}, false
}

// locList reads a location list. It returns nil for a list it cannot read.
func (f *File) locList(u *unitCtx, la locAttr) []loclist.Entry {
	size := int(f.ELF.PointerSize())
	if u.version < 5 {
		return loclist.Dwarf4(f.section(".debug_loc"), la.offset, u.base, size, f.order())
	}
	b := f.section(".debug_loclists")
	off := la.offset
	if la.indexed {
		var ok bool
		if off, ok = loclist.Index(b, u.loclistsBase, la.index, f.order()); !ok {
			return nil
		}
	}
	return loclist.Dwarf5(b, off, u.base, size, f.order(), func(i uint64) (uint64, bool) { return f.addrx(u, i) })
}

// locAt is where a value described by la lives at pc: the expression, or
// the entry of the location list that covers pc. found is false when the
// value is not available at pc.
func (f *File) locAt(u *unitCtx, la locAttr, pc uint64) (expr []byte, found bool) {
	if !la.list {
		return la.expr, true
	}
	return loclist.At(f.locList(u, la), pc)
}

// locSpan is the stretch around pc where la gives the location that
// holds at pc (see loclist.Span); 0, 0 for a single expression.
func (f *File) locSpan(u *unitCtx, la locAttr, pc uint64) (lo, hi uint64) {
	if !la.list {
		return 0, 0
	}
	return loclist.Span(f.locList(u, la), pc)
}

// decodeLoc turns an expression into the model's Loc for this file's
// architecture. frameBase is the enclosing function's DW_AT_frame_base
// expression.
func (f *File) decodeLoc(u *unitCtx, expr, frameBase []byte) types.Loc {
	a, err := arch.ForMachine(f.ELF.Machine)
	if err != nil {
		return types.Loc{Pieces: []types.Piece{{Kind: types.LocExpr, Expr: err.Error()}}}
	}
	header := f.unitHeader(u)
	return dwexpr.Decode(expr, &dwexpr.Options{
		Arch: a, AddrSize: int(f.ELF.PointerSize()), Order: f.order(), FrameBase: frameBase,
		Addrx:    func(i uint64) (uint64, bool) { return f.addrx(u, i) },
		BaseType: func(off uint64) (int64, bool, bool, bool) { return f.baseType(header, header+off) },
		Unit:     header,
	})
}

// unitHeader is the offset in .debug_info of the header of the unit whose
// entry is at u.off (see headerOf), u.off itself when none is found.
func (f *File) unitHeader(u *unitCtx) uint64 {
	if o, ok := f.headerOf(u.off); ok {
		return uint64(o)
	}
	return uint64(u.off)
}

// headerOf is the offset in .debug_info of the header of the unit whose
// entry is at off: 11 bytes before it in DWARF 2 to 4, 12 in DWARF 5
// (32-bit DWARF).
func (f *File) headerOf(off Offset) (int, bool) {
	info := f.section(".debug_info")
	for _, n := range []int{12, 11} {
		o := int(off) - n
		if o < 0 || o+n > len(info) {
			continue
		}
		v := f.order().Uint16(info[o+4:])
		if n == 12 && v == 5 || n == 11 && v >= 2 && v <= 4 {
			return o, true
		}
	}
	return 0, false
}

// unitAddrSize is the address size the header of the unit whose entry is
// at off gives (the width of a DWARF 2 to 4 line program's addresses),
// the file's pointer size when no header is found.
func (f *File) unitAddrSize(off Offset) int {
	o, ok := f.headerOf(off)
	if !ok {
		return int(f.ELF.PointerSize())
	}
	info := f.section(".debug_info")
	if int(off)-o == 12 {
		return int(info[o+7]) // length, version, unit type, address size
	}
	return int(info[o+10]) // length, version, abbreviations' offset, address size
}

// baseType describes the base type whose entry is at off in the unit
// whose header is at header (for typed DWARF expression operations): its
// size, and whether it is signed or a floating-point type. The scanner
// reads the one entry.
func (f *File) baseType(header, off uint64) (size int64, signed, float, ok bool) {
	s := f.newScan()
	if header >= uint64(len(s.info)) {
		return 0, false, false, false
	}
	s.pos = int(header)
	if s.unit() != nil || off < uint64(s.pos) || off >= uint64(s.u.end) {
		return 0, false, false, false
	}
	s.pos = int(off)
	d, found, err := s.next()
	if err != nil || !found || d.tag != TagBaseType {
		return 0, false, false, false
	}
	var enc int64
	pos := d.attrs
	for _, sp := range d.decl.specs {
		switch sp.attr {
		case AttrByteSize:
			size, _ = s.constant(pos, sp)
		case AttrEncoding:
			enc, _ = s.constant(pos, sp)
		}
		if pos, err = s.skip(pos, sp); err != nil {
			return 0, false, false, false
		}
	}
	switch enc {
	case 0x05, 0x06, 0x0d: // DW_ATE_signed, signed_char, signed_fixed
		signed = true
	case 0x03, 0x04, 0x09, 0x0f: // complex_float, float, imaginary_float, decimal_float
		float = true
	}
	return size, signed, float, true
}

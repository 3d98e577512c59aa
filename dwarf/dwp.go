package dwarf

import (
	"encoding/binary"
	"fmt"

	"github.com/binscope/binscope/internal/elfx"
)

// A DWARF package (.dwp, made by dwp or llvm-dwp from a binary's .dwo
// files) holds every split unit in one .debug_info.dwo and the other .dwo
// sections concatenated; .debug_cu_index says, for each DWO id, where the
// unit's contribution to each section starts and how long it is. Strings
// (.debug_str.dwo) are merged, not indexed.

// DW_SECT_* column identifiers of a DWARF 5 unit index (version 2, the
// GNU extension's for DWARF 4, has the same but for 5, .debug_loc.dwo,
// and no lists of ranges).
const (
	sectInfo       = 1
	sectAbbrev     = 3
	sectLoclists   = 5
	sectStrOffsets = 6
	sectRnglists   = 8
)

// dwp is an open package: its sections and its compile-unit index.
type dwp struct {
	path  string
	secs  map[string][]byte
	order binary.ByteOrder
	rows  map[uint64]map[uint32][2]uint32 // DWO id -> section id -> offset, size
	gnu   bool                            // a unit index of version 2: DWARF 4 units
}

// openDWP reads the package at path.
func openDWP(path string, order binary.ByteOrder) (*dwp, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	p := &dwp{path: path, secs: map[string][]byte{}, order: order}
	for _, name := range append([]string{".debug_cu_index"}, dwoSections...) {
		b, err := ef.SectionData(name)
		if err != nil {
			return nil, err
		}
		p.secs[name] = b
	}
	if p.rows, p.gnu, err = readUnitIndex(p.secs[".debug_cu_index"], order); err != nil {
		return nil, elfx.Decode(path, ".debug_cu_index", 0, err)
	}
	return p, nil
}

// readUnitIndex reads a unit index: DWARF 5's (version 5), or the GNU
// extension's of DWARF 4 units (version 2, gnu true), laid out alike.
func readUnitIndex(b []byte, order binary.ByteOrder) (rows map[uint64]map[uint32][2]uint32, gnu bool, err error) {
	if len(b) < 16 {
		return nil, false, fmt.Errorf("no unit index (%d bytes): not a DWARF package", len(b))
	}
	if v := order.Uint16(b); v != 5 {
		if order.Uint32(b) != 2 {
			return nil, false, fmt.Errorf("unit index version %d, want 5 or 2", v)
		}
		gnu = true
	}
	rows, err = readUnitRows(b, order)
	return rows, gnu, err
}

// readUnitRows reads the rows of a unit index (see readUnitIndex).
func readUnitRows(b []byte, order binary.ByteOrder) (map[uint64]map[uint32][2]uint32, error) {
	cols, units, slots := uint64(order.Uint32(b[4:])), uint64(order.Uint32(b[8:])), uint64(order.Uint32(b[12:]))
	need := 16 + slots*12 + cols*4 + 2*units*cols*4
	if cols == 0 || cols > 16 || units > slots || need > uint64(len(b)) {
		return nil, fmt.Errorf("unit index of %d columns, %d units, %d slots in %d bytes", cols, units, slots, len(b))
	}
	hashes, index := b[16:], b[16+slots*8:]
	ids := b[16+slots*12:]
	offs := ids[cols*4:]
	sizes := offs[units*cols*4:]
	u32 := func(t []byte, i uint64) uint32 { return order.Uint32(t[i*4:]) }
	rows := map[uint64]map[uint32][2]uint32{}
	for s := uint64(0); s < slots; s++ {
		row := uint64(u32(index, s))
		if row == 0 {
			continue
		}
		if row > units {
			return nil, fmt.Errorf("slot %d names row %d of %d", s, row, units)
		}
		cells := map[uint32][2]uint32{}
		for c := uint64(0); c < cols; c++ {
			cells[u32(ids, c)] = [2]uint32{u32(offs, (row-1)*cols+c), u32(sizes, (row-1)*cols+c)}
		}
		rows[order.Uint64(hashes[s*8:])] = cells
	}
	return rows, nil
}

// unit is the split unit of DWO id id, with its contributions.
func (p *dwp) unit(id uint64) (splitUnit, bool) {
	cells, ok := p.rows[id]
	if !ok {
		return splitUnit{}, false
	}
	part := func(sect uint32, name string) []byte {
		c, ok := cells[sect]
		b := p.secs[name]
		if !ok || uint64(c[0])+uint64(c[1]) > uint64(len(b)) {
			return nil
		}
		return b[c[0] : c[0]+c[1]]
	}
	u := splitUnit{from: p.path, unit: part(sectInfo, ".debug_info.dwo"), abbrev: part(sectAbbrev, ".debug_abbrev.dwo"),
		strOffsets: part(sectStrOffsets, ".debug_str_offsets.dwo"), str: p.secs[".debug_str.dwo"]}
	if p.gnu {
		u.loc = part(sectLoclists, ".debug_loc.dwo")
		sc, cu, err := gnuScan(u.unit, u.abbrev, p.order)
		if err != nil {
			return splitUnit{}, false
		}
		at, _, ok := gnuIDAt(sc, cu)
		return u, ok && p.order.Uint64(u.unit[at:]) == id
	}
	u.loclists, u.rnglists = part(sectLoclists, ".debug_loclists.dwo"), part(sectRnglists, ".debug_rnglists.dwo")
	if len(u.unit) < 20 || p.order.Uint64(u.unit[12:]) != id {
		return splitUnit{}, false
	}
	return u, true
}

package loclist

import (
	"encoding/binary"
	"fmt"
)

// DW_LLE_GNU_* kinds of the location lists of GCC's DWARF 4 split DWARF
// (-gsplit-dwarf -gdwarf-4), in a .dwo's .debug_loc.dwo: addresses are
// indices into the binary's .debug_addr, and an expression's length is 2
// bytes as in .debug_loc.
const (
	GNUEnd         = 0 // DW_LLE_GNU_end_of_list_entry
	GNUBaseAddress = 1 // DW_LLE_GNU_base_address_selection_entry: A is an index
	GNUStartEnd    = 2 // DW_LLE_GNU_start_end_entry: A and B are indices
	GNUStartLength = 3 // DW_LLE_GNU_start_length_entry: A is an index, B a length
)

// GNUEntry is an entry of a GNU split location list, its addresses not
// resolved: what A and B hold depends on Kind. Expr is nil for a base
// address selection.
type GNUEntry struct {
	Kind byte
	A, B uint64
	Expr []byte
}

// GNU reads the .debug_loc.dwo list at off in b up to its end-of-list
// entry, which it leaves out. It returns an error for an offset outside
// b, an entry it cannot read or a kind it does not know; a list longer
// than MaxEntries is one it cannot read.
func GNU(b []byte, off int64, order binary.ByteOrder) ([]GNUEntry, error) {
	if off < 0 || off >= int64(len(b)) {
		return nil, fmt.Errorf("location list at %#x past .debug_loc.dwo's %d bytes", off, len(b))
	}
	r := Reader{B: b[off:], Order: order, AddrSize: 8, OK: true}
	var out []GNUEntry
	for n := 0; ; n++ {
		if n >= MaxEntries || !r.OK || len(r.B) == 0 {
			return nil, fmt.Errorf("location list at %#x: unreadable entry %d", off, n)
		}
		e := GNUEntry{Kind: r.Byte()}
		switch e.Kind {
		case GNUEnd:
			return out, nil
		case GNUBaseAddress:
			e.A = r.Uleb()
			out = append(out, e)
			continue
		case GNUStartEnd:
			e.A = r.Uleb()
			e.B = r.Uleb()
		case GNUStartLength:
			e.A = r.Uleb()
			if len(r.B) < 4 {
				r.OK = false
				continue
			}
			e.B = uint64(order.Uint32(r.B))
			r.B = r.B[4:]
		default:
			return nil, fmt.Errorf("location list at %#x: entry kind %d", off, e.Kind)
		}
		if len(r.B) < 2 || int(order.Uint16(r.B))+2 > len(r.B) {
			r.OK = false
			continue
		}
		k := int(order.Uint16(r.B))
		e.Expr = r.B[2 : 2+k]
		r.B = r.B[2+k:]
		out = append(out, e)
	}
}

package dwarf

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Split DWARF (gcc or clang -gsplit-dwarf, DWARF 5; DWARF 4's GNU
// extension in gnusplit.go) leaves in the binary
// one skeleton unit per object (DW_TAG_skeleton_unit: DW_AT_dwo_name,
// DW_AT_comp_dir, the object's addresses, its line program and its
// DW_AT_addr_base, its DWO id in the unit header) and moves the object's
// types, functions and variables to a split unit (DW_UT_split_compile) in
// a .dwo file beside the object, or, packed by dwp or llvm-dwp, in one
// BINARY.dwp beside the binary. The split unit's strings, location and
// range lists live in the .dwo's own sections; its addresses are indices
// into the binary's .debug_addr from the skeleton's DW_AT_addr_base.
//
// openSplit finds each skeleton's split unit and joins the two into one
// ordinary DWARF 5 compile unit of an ELF image built in memory (see
// join.go), which the package then reads as any debug file: the scanner,
// debug/dwarf and every walk see plain units.

// Attributes of split DWARF that debug/dwarf does not name.
const (
	attrDwoName    = Attr(0x76)   // DW_AT_dwo_name
	attrGNUDwoName = Attr(0x2130) // DW_AT_GNU_dwo_name (DWARF 4 GNU extension)
	tagSkeleton    = Tag(0x4a)    // DW_TAG_skeleton_unit
)

// skeleton is what a skeleton unit says of its split unit.
type skeleton struct {
	off      int    // the skeleton unit's offset in .debug_info
	id       uint64 // the DWO id both units' headers carry
	dwoName  string
	compDir  string
	low      uint64      // DW_AT_low_pc, the unit's base address
	ranges   [][2]uint64 // the unit's code
	stmt     int64       // DW_AT_stmt_list in the binary's .debug_line, -1 for none
	addrBase int64       // DW_AT_addr_base in the binary's .debug_addr
	// gnu marks a DWARF 4 skeleton of the GNU extension (see
	// gnusplit.go), whose DW_AT_ranges in the split unit count from
	// rangesBase in the binary's .debug_ranges.
	gnu        bool
	rangesBase int64
}

// skeletons lists the skeleton units of f's .debug_info, info: none for
// a file without split DWARF. A unit header is read for each unit, and
// the first entry of skeleton units only.
func (f *File) skeletons(info []byte, order binary.ByteOrder) ([]skeleton, error) {
	var out []skeleton
	r := f.dieReader()
	for pos := 0; pos+12 <= len(info); {
		length := int(order.Uint32(info[pos:]))
		if length >= 0xfffffff0 || pos+4+length > len(info) {
			return out, nil // DWARF 64 or corrupt: the rest of the package says so
		}
		next := pos + 4 + length
		version, utype := order.Uint16(info[pos+4:]), info[pos+6]
		switch {
		case version == 5 && utype == 4 && length >= 16+1:
			r.Seek(Offset(pos + 20))
			e, err := r.Next()
			if err != nil || e == nil || e.Tag != tagSkeleton {
				break
			}
			s := skeleton{off: pos, id: order.Uint64(info[pos+12:]), stmt: -1}
			s.dwoName, _ = e.Str(attrDwoName)
			s.compDir, _ = e.Str(AttrCompDir)
			s.low, _ = e.Uint(AttrLowpc)
			if v, ok := e.Int(AttrStmtList); ok {
				s.stmt = v
			}
			s.addrBase, _ = e.Int(AttrAddrBase)
			if s.ranges, err = f.ranges(e); err != nil {
				return nil, fmt.Errorf("skeleton unit at %#x: %w", pos, err)
			}
			out = append(out, s)
		case version <= 4 && length >= 7+1:
			r.Seek(Offset(pos + 11))
			if e, err := r.Next(); err == nil && e != nil {
				s, ok, err := f.gnuSkeleton(e, pos)
				if err != nil {
					return nil, err
				}
				if ok {
					out = append(out, s)
				}
			}
		}
		pos = next
	}
	return out, nil
}

// splitUnit is a split unit found for a skeleton, with the parts of the
// .dwo (or .dwp) sections that are its.
type splitUnit struct {
	sk         skeleton
	from       string // the .dwo or .dwp file
	unit       []byte // the unit, header included
	abbrev     []byte // the abbreviations its header's offset is relative to
	strOffsets []byte // its .debug_str_offsets.dwo contribution, header included
	str        []byte // the .debug_str.dwo its string offsets point into
	loclists   []byte // its .debug_loclists.dwo contribution, nil for none
	rnglists   []byte // its .debug_rnglists.dwo contribution, nil for none
	loc        []byte // its .debug_loc.dwo (DWARF 4 GNU), nil for none
}

// dwoSections are the sections of a .dwo a split unit reads.
var dwoSections = []string{".debug_info.dwo", ".debug_abbrev.dwo", ".debug_str_offsets.dwo",
	".debug_str.dwo", ".debug_loclists.dwo", ".debug_rnglists.dwo", ".debug_loc.dwo"}

// readDWO reads a .dwo's sections, by their names in dwoSections.
func readDWO(path string) (map[string][]byte, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	secs := map[string][]byte{}
	for _, name := range dwoSections {
		b, err := ef.SectionData(name)
		if err != nil {
			return nil, err
		}
		secs[name] = b
	}
	if secs[".debug_info.dwo"] == nil {
		return nil, fmt.Errorf("%s: no .debug_info.dwo section: not a split DWARF object", path)
	}
	return secs, nil
}

// dwoUnit finds the split compile unit with DWO id id in a .dwo's
// sections; its contributions are the whole sections.
func dwoUnit(secs map[string][]byte, id uint64, order binary.ByteOrder) ([]byte, bool) {
	info := secs[".debug_info.dwo"]
	for pos := 0; pos+20 <= len(info); {
		length := int(order.Uint32(info[pos:]))
		if length >= 0xfffffff0 || pos+4+length > len(info) {
			return nil, false
		}
		if order.Uint16(info[pos+4:]) == 5 && info[pos+6] == 5 && order.Uint64(info[pos+12:]) == id {
			return info[pos : pos+4+length], true
		}
		pos += 4 + length
	}
	return nil, false
}

// dwoCandidates are the places a skeleton's .dwo may be, as gdb looks:
// the name as given when absolute, under DW_AT_comp_dir, beside the
// binary, then in each debug directory (the name, then its base name).
func dwoCandidates(sk skeleton, binary string) []string {
	name := sk.dwoName
	var c []string
	if filepath.IsAbs(name) {
		c = append(c, name)
	} else {
		if sk.compDir != "" {
			c = append(c, filepath.Join(sk.compDir, name))
		}
		c = append(c, filepath.Join(filepath.Dir(binary), name))
	}
	for _, dir := range elfx.DebugDirs {
		if !filepath.IsAbs(name) {
			c = append(c, filepath.Join(dir, name))
		}
		c = append(c, filepath.Join(dir, filepath.Base(name)))
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range c {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// dwpCandidates are the places the package of the binary's .dwo files
// may be: BINARY.dwp beside it (as gdb and lldb look), then in each debug
// directory.
func dwpCandidates(binary string) []string {
	out := []string{binary + ".dwp"}
	for _, dir := range elfx.DebugDirs {
		out = append(out, filepath.Join(dir, filepath.Base(binary)+".dwp"))
	}
	return out
}

// findSplitUnits finds the split unit of each skeleton: in the binary's
// .dwp when there is one, else in its .dwo. Those it cannot find are
// said in missing, one line each.
func findSplitUnits(sks []skeleton, binary string, order binary.ByteOrder) (units []splitUnit, missing []string, err error) {
	var pkg *dwp
	for _, p := range dwpCandidates(binary) {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if pkg, err = openDWP(p, order); err != nil {
			return nil, nil, err
		}
		break
	}
	for _, sk := range sks {
		if pkg != nil && pkg.gnu == sk.gnu {
			if u, ok := pkg.unit(sk.id); ok {
				u.sk = sk
				units = append(units, u)
				continue
			}
		}
		u, tried, err := findDWO(sk, binary, order)
		if err != nil {
			return nil, nil, err
		}
		if u == nil {
			missing = append(missing, fmt.Sprintf("%s: split DWARF object %s (DWO id %#016x) not found at %s",
				binary, sk.dwoName, sk.id, strings.Join(tried, ", ")))
			continue
		}
		units = append(units, *u)
	}
	return units, missing, nil
}

// findDWO opens the first of sk's candidate .dwo files that holds its
// unit; a file of that name holding another DWO id (an object rebuilt
// since the binary was linked) is passed over.
func findDWO(sk skeleton, binary string, order binary.ByteOrder) (*splitUnit, []string, error) {
	tried := dwoCandidates(sk, binary)
	for _, p := range tried {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		secs, err := readDWO(p)
		if err != nil {
			return nil, nil, err
		}
		find := dwoUnit
		if sk.gnu {
			find = gnuDwoUnit
		}
		unit, ok := find(secs, sk.id, order)
		if !ok {
			continue
		}
		abbrev := secs[".debug_abbrev.dwo"]
		return &splitUnit{sk: sk, from: p, unit: unit, abbrev: abbrev,
			strOffsets: secs[".debug_str_offsets.dwo"], str: secs[".debug_str.dwo"],
			loclists: secs[".debug_loclists.dwo"], rnglists: secs[".debug_rnglists.dwo"], loc: secs[".debug_loc.dwo"]}, tried, nil
	}
	return nil, tried, nil
}

// openSplit joins the split units of f.Debug's skeletons, when it has
// some, into an image that becomes f.Debug, its DWARF sections read. A
// split unit it cannot find goes to Options.Warn and is left out; when
// none is found the error wraps types.ErrNoDebugInfo and names the first
// missing .dwo.
func (f *File) openSplit() error {
	info := f.Debug.DWARFSection(".debug_info")
	if info == nil {
		return nil
	}
	// Read by a File of its own: the units, abbreviations and sections
	// f reads are the joined image's.
	sks, err := makeFile(f.ELF, f.Debug, nil).skeletons(info, f.Debug.ByteOrder)
	if err != nil {
		return elfx.Decode(f.Debug.Path, ".debug_info", elfx.NoOffset, err)
	}
	if len(sks) == 0 {
		return nil
	}
	units, missing, err := findSplitUnits(sks, f.ELF.Path, f.Debug.ByteOrder)
	if err != nil {
		return err
	}
	if len(units) == 0 {
		more := ""
		if len(missing) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(missing)-1)
		}
		return fmt.Errorf("%s%s: %w (give the directory of the .dwo files with --debuginfo DIR)", missing[0], more, types.ErrNoDebugInfo)
	}
	for _, m := range missing {
		if f.opts.Warn != nil {
			f.opts.Warn(m + ": its functions and types are missing (give its directory with --debuginfo DIR)")
		}
	}
	img, err := join(f.Debug, units)
	if err != nil {
		return err
	}
	if err := img.ReadDWARF(); err != nil {
		return err
	}
	if f.Debug != f.ELF {
		f.Debug.Close()
	}
	f.Debug = img
	return nil
}

// Split reports whether df's DWARF starts with a skeleton unit: split
// DWARF, whose .dwo or .dwp files a cache keyed by df alone does not see
// change. Only the first unit header is read: its 8 bytes inflated alone
// (a warm gofunct asks this before using its index cache entry, where a
// lazy section's first read inflates 256 KB).
func Split(df *elfx.File) bool {
	b := make([]byte, 8)
	if s := df.Section(".debug_info"); s != nil && s.Type != elf.SHT_NOBITS {
		err := elfx.Guard(df.Path, ".debug_info", func() error {
			_, err := io.ReadFull(s.Open(), b)
			return err
		})
		if err != nil {
			return false
		}
	} else { // .zdebug_info: GNU's compression, which elfx reads
		l, err := df.LazySection(".debug_info")
		if err != nil {
			return false
		}
		if b, err = l.Prefix(8); err != nil || len(b) < 7 {
			return false
		}
	}
	// DWARF 4 GNU skeletons index .debug_addr, which DWARF 4 has not
	// otherwise.
	v := df.ByteOrder.Uint16(b[4:])
	return v == 5 && b[6] == 4 || v <= 4 && (df.Section(".debug_addr") != nil || df.Section(".zdebug_addr") != nil)
}

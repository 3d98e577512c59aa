// Package dwarftest gives the tests debug/dwarf's reading of the DWARF
// sections elfx reads, as the oracle of the project's own DIE reader
// (package dwarf). Only tests and the test harnesses (internal/testutil,
// internal/gen) import it: no command links debug/dwarf.
package dwarftest

import (
	"debug/dwarf"
	"fmt"

	"github.com/binscope/binscope/internal/elfx"
)

// Data is debug/dwarf's Data over f's DWARF sections as f keeps them
// (elfx.File.DWARFSection: inflated, relocated, the prefixes a lookup by
// name read, the units of a split DWARF image joined), read first when f
// has none. dwarf.New's checks of the unit headers and abbreviation
// tables come back as its DecodeError, wrapped in an *elfx.DecodeError;
// a panic of debug/dwarf as an *elfx.DecodeError too.
func Data(f *elfx.File) (d *dwarf.Data, err error) {
	if f.DWARFSection(".debug_info") == nil {
		if err := f.ReadDWARF(); err != nil {
			return nil, err
		}
	}
	err = elfx.Guard(f.Path, ".debug_info", func() error {
		d, err = newData(f)
		return err
	})
	if err == nil {
		return d, nil
	}
	if de, ok := err.(dwarf.DecodeError); ok {
		return nil, &elfx.DecodeError{File: f.Path, Section: ".debug_" + de.Name, Offset: uint64(de.Offset), Err: fmt.Errorf("%s", de.Err)}
	}
	return nil, elfx.Decode(f.Path, ".debug_info", elfx.NoOffset, err)
}

func newData(f *elfx.File) (*dwarf.Data, error) {
	s := f.DWARFSection
	d, err := dwarf.New(s(".debug_abbrev"), nil, nil, s(".debug_info"), s(".debug_line"), nil, s(".debug_ranges"), s(".debug_str"))
	if err != nil {
		return nil, err
	}
	for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
		if b := s(name); b != nil {
			if err := d.AddSection(name, b); err != nil {
				return nil, err
			}
		}
	}
	for i, b := range f.DWARFTypes() {
		if err := d.AddTypes(fmt.Sprintf("types-%d", i), b); err != nil {
			return nil, err
		}
	}
	return d, nil
}

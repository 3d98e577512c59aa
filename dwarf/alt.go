package dwarf

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// A dwz-compressed file (dwz -m ALT a b) keeps the DWARF its files share
// in an alternate file named by its .gnu_debugaltlink section (a path,
// then the alternate file's build-id). Its units import the alternate
// file's partial units (DW_TAG_imported_unit), refer to types there with
// DW_FORM_GNU_ref_alt and to names in its .debug_str with
// DW_FORM_GNU_strp_alt: offsets into the alternate file, which debug/dwarf
// hands over as int64 values of class ClassReferenceAlt and
// ClassStringAlt.

// altLink is what .gnu_debugaltlink says: the alternate file's path and
// build-id.
type altLink struct {
	path    string
	buildID string
}

func readAltLink(df *elfx.File) (altLink, bool) {
	if l, ok := readSup(df); ok {
		return l, true
	}
	s := df.Section(".gnu_debugaltlink")
	if s == nil {
		return altLink{}, false
	}
	b, err := s.Data()
	if err != nil {
		return altLink{}, false
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return altLink{}, false
	}
	return altLink{path: string(b[:i]), buildID: hex.EncodeToString(b[i+1:])}, true
}

// readSup reads DWARF 5's .debug_sup of a file that uses a supplementary
// file (version 5, is_supplementary 0, the file's name, a checksum): the
// same links as dwz's, with DW_FORM_ref_sup4/8 and DW_FORM_strp_sup.
func readSup(df *elfx.File) (altLink, bool) {
	s := df.Section(".debug_sup")
	if s == nil {
		return altLink{}, false
	}
	b, err := s.Data()
	if err != nil || len(b) < 4 || b[2] != 0 { // a supplementary file itself
		return altLink{}, false
	}
	i := bytes.IndexByte(b[3:], 0)
	if i <= 0 {
		return altLink{}, false
	}
	return altLink{path: string(b[3 : 3+i])}, true
}

// candidates are the places the alternate file may be: the path as
// given (relative ones from the debug file's directory), and by build-id
// under the debug root.
func (l altLink) candidates(debugPath string) []string {
	var out []string
	if filepath.IsAbs(l.path) {
		out = append(out, l.path)
	} else {
		out = append(out, filepath.Join(filepath.Dir(debugPath), l.path))
	}
	if len(l.buildID) > 2 {
		out = append(out, filepath.Join(elfx.DebugRoot, ".build-id", l.buildID[:2], l.buildID[2:]+".debug"))
	}
	return out
}

// openAlt opens the alternate file f's debug file names, if it has one:
// f.alt is nil and f.altMissing says why when it cannot be found.
func (f *File) openAlt() {
	l, ok := readAltLink(f.Debug)
	if !ok {
		return
	}
	if uint64(len(f.Debug.DWARFSection(".debug_info"))) >= uint64(altBit) {
		f.altMissing = fmt.Sprintf("%s: could not resolve dwz alternate debug file %s: .debug_info of 2 GiB or more is not read with one", f.Path, l.path)
		return
	}
	for _, p := range l.candidates(f.Debug.Path) {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ef, err := elfx.Open(p)
		if err != nil {
			continue
		}
		if l.buildID != "" && ef.BuildID != "" && ef.BuildID != l.buildID {
			ef.Close()
			continue
		}
		opts := f.opts
		alt, err := newFileFrom(ef, ef, &opts)
		if err != nil {
			ef.Close()
			continue
		}
		f.alt = alt
		return
	}
	f.altMissing = fmt.Sprintf("%s: could not resolve dwz alternate debug file %s (build-id %s; .gnu_debugaltlink): the types it holds are missing",
		f.Path, l.path, l.buildID)
}

// altBit marks a reference into the alternate file: DW_FORM_GNU_ref_alt's
// offset with it set travels as any other Offset (32 bits) until the
// converter follows it there. openAlt refuses files whose .debug_info
// reaches it.
const altBit Offset = 1 << 31

// resolveField gives a value of a form that points into the alternate
// file (DW_FORM_GNU_strp_alt, DWARF 5's strp_sup: a name;
// DW_FORM_GNU_ref_alt, ref_sup: a reference) the shape the rest of the
// package reads: the string, or an offset with altBit set. A file with
// no alternate file keeps debug/dwarf's value.
func (f *File) resolveField(fl *Field) {
	if f.alt == nil && f.altMissing == "" {
		return
	}
	off := int64(fl.n)
	switch fl.kind {
	case kindInt: // DW_FORM_GNU_ref_alt, DW_FORM_GNU_strp_alt
	case kindUint32: // DWARF 5's ref_sup4, strp_sup (32-bit DWARF)
		fl.class = uint8(supClass(fl.Class()))
	case kindUint: // ref_sup8, strp_sup (64-bit DWARF)
		if fl.Class() != ClassString && fl.Class() != ClassReference {
			return
		}
		fl.class = uint8(supClass(fl.Class()))
	default:
		return
	}
	switch fl.Class() {
	case ClassStringAlt:
		if f.alt != nil {
			if s, ok := f.alt.stringAt(off); ok {
				fl.setString(s, ClassString)
			}
		}
	case ClassReferenceAlt:
		if off >= 0 && off < int64(altBit) {
			fl.setRef(altBit|Offset(off), ClassReference)
		}
	}
}

// debugStr is f's .debug_str (read once: dwz writes the alternate file
// as a relocatable object, whose sections elfx does not keep).
func (f *File) debugStr() []byte { return f.section(".debug_str") }

// supClass maps the classes debug/dwarf gives DWARF 5's supplementary
// forms (their values unsigned, unlike any other string or reference)
// to dwz's.
func supClass(c Class) Class {
	switch c {
	case ClassString:
		return ClassStringAlt
	case ClassReference:
		return ClassReferenceAlt
	}
	return c
}

// stringAt is the string at off in f's .debug_str.
func (f *File) stringAt(off int64) (string, bool) {
	sec := f.debugStr()
	if off < 0 || off >= int64(len(sec)) {
		return "", false
	}
	i := bytes.IndexByte(sec[off:], 0)
	if i < 0 {
		return "", false
	}
	return string(sec[off : off+int64(i)]), true
}

// altRef is the offset into the alternate file a DW_AT_type of e holds,
// when it refers there.
func altRef(e *Entry, a Attr) (Offset, bool) {
	fl := e.AttrField(a)
	if fl == nil {
		return 0, false
	}
	switch fl.kind {
	case kindRef: // as resolveField gives it
		v := Offset(fl.n)
		return v &^ altBit, fl.Class() == ClassReference && v&altBit != 0
	case kindInt:
		return Offset(fl.n), fl.Class() == ClassReferenceAlt
	case kindUint32, kindUint:
		return Offset(fl.n), fl.Class() == ClassReference // ref_sup4, ref_sup8
	}
	return 0, false
}

// altType converts the type at off in the alternate file; a stand-in
// named after the missing file when it could not be opened.
func (c *converter) altType(off Offset, depth int) (types.Type, error) {
	if c.alt == nil {
		return &types.Base{Name: "/* in the missing dwz file */"}, nil
	}
	return c.alt.typ(off, depth)
}

// importedUnits are the offsets of the alternate file's partial units
// that f's units import (DW_TAG_imported_unit among a unit's top-level
// children), with those they import in turn.
func (f *File) importedUnits() (map[Offset]bool, error) {
	out := map[Offset]bool{}
	var todo []Offset
	r := f.dieReader()
	for {
		cu, err := r.Next()
		if err != nil {
			return nil, f.infoError(noOffset, err)
		}
		if cu == nil {
			break
		}
		if !cu.Children {
			continue
		}
		for {
			e, err := r.Next()
			if err != nil {
				return nil, f.infoError(noOffset, err)
			}
			if e == nil || e.Tag == 0 {
				break
			}
			if e.Tag == TagImportedUnit {
				if off, ok := altRef(e, AttrImport); ok && !out[off] {
					out[off] = true
					todo = append(todo, off)
				}
			}
			if e.Children {
				r.SkipChildren()
			}
		}
	}
	// Partial units of the alternate file import others of it.
	if f.alt != nil {
		ar := f.alt.dieReader()
		for len(todo) > 0 {
			off := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			ar.Seek(off)
			pu, err := ar.Next()
			if err != nil || pu == nil || !pu.Children {
				continue
			}
			for {
				e, err := ar.Next()
				if err != nil || e == nil || e.Tag == 0 {
					break
				}
				if o, ok := e.Ref(AttrImport); ok && e.Tag == TagImportedUnit && !out[o] {
					out[o] = true
					todo = append(todo, o)
				}
				if e.Children {
					ar.SkipChildren()
				}
			}
		}
	}
	return out, nil
}

// addAltTypes adds to s the named types of the alternate file's partial
// units that f imports, after f's own.
func (c *converter) addAltTypes(s *types.Spec, added map[types.Type]bool) error {
	if c.f.altMissing != "" && c.f.opts.Warn != nil {
		c.f.opts.Warn(c.f.altMissing)
	}
	if c.alt == nil {
		return nil
	}
	units, err := c.f.importedUnits()
	if err != nil {
		return err
	}
	a := c.alt
	seen := make(map[string]types.Type)
	var key []byte
	for _, n := range a.ix.named {
		if !listedTag(n.tag) {
			continue
		}
		if int(n.unit) < 0 || int(n.unit) >= len(a.ix.units) || !units[a.ix.units[n.unit].entry.Offset] {
			continue
		}
		if key, err = a.dedupKey(key[:0], n); err != nil {
			return err
		}
		if _, ok := seen[string(key)]; ok {
			continue
		}
		t, err := a.root(n.off)
		if err != nil {
			return err
		}
		seen[string(key)] = t
		if !added[t] {
			added[t] = true
			s.Add(t)
		}
	}
	return nil
}

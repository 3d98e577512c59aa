package testutil

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CorruptMember writes to a new file a copy of the ELF file at path with
// one record damaged: the name of the first member of a named struct that
// is a DW_FORM_strp (a 4-byte offset into .debug_str) made to point past
// the section, which debug/dwarf then refuses to decode. It returns the
// new file, the struct's name and the member DIE's offset in .debug_info.
func CorruptMember(t testing.TB, path string) (bad, owner string, off uint64) {
	t.Helper()
	good, ef, d := ReadDWARF(t, path)
	info, strs := ef.Section(".debug_info"), ef.Section(".debug_str")
	if info == nil || strs == nil || info.Flags&elf.SHF_COMPRESSED != 0 || ef.ByteOrder != binary.LittleEndian {
		t.Fatalf("%s: want plain little-endian .debug_info and .debug_str", path)
	}
	str, err := strs.Data()
	if err != nil {
		t.Fatal(err)
	}
	owner, die, field := memberWithStrp(t, d, good[info.Offset:info.Offset+info.Size], str)
	b := bytes.Clone(good)
	binary.LittleEndian.PutUint32(b[info.Offset+field:], 0xfffffff0)
	bad = filepath.Join(t.TempDir(), "one-bad-member")
	if err := os.WriteFile(bad, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bad, owner, uint64(die)
}

// ReadDWARF reads the ELF file at path with the standard library alone:
// its bytes, its ELF and its DWARF (for tests that damage a copy).
func ReadDWARF(t testing.TB, path string) ([]byte, *elf.File, *dwarf.Data) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ef.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return b, ef, d
}

// memberWithStrp finds a member of a named struct whose name (5 bytes or
// more) is a DW_FORM_strp: the struct's name, the member DIE's offset, and
// the offset in info of the name's string offset.
func memberWithStrp(t testing.TB, d *dwarf.Data, info, str []byte) (string, dwarf.Offset, uint64) {
	r := d.Reader()
	owner, candOwner, cand := "", "", (*dwarf.Entry)(nil)
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no member named through .debug_str (%v)", err)
		}
		if e.Tag == 0 {
			continue
		}
		if cand != nil && e.Offset > cand.Offset {
			// The candidate's bytes end where this DIE starts.
			name, _ := cand.Val(dwarf.AttrName).(string)
			for i := uint64(cand.Offset); i+4 <= uint64(e.Offset); i++ {
				v := binary.LittleEndian.Uint32(info[i:])
				if int(v) < len(str) && bytes.HasPrefix(str[v:], append([]byte(name), 0)) {
					return candOwner, cand.Offset, i
				}
			}
		}
		cand = nil
		switch e.Tag {
		case dwarf.TagStructType:
			owner, _ = e.Val(dwarf.AttrName).(string)
		case dwarf.TagMember:
			if name, _ := e.Val(dwarf.AttrName).(string); owner != "" && len(name) >= 5 {
				cand, candOwner = e, owner
			}
		default:
			owner = ""
		}
	}
}

// HeaderDamage is a way CorruptUnitHeaders damages a unit header.
type HeaderDamage struct {
	Name string // what is damaged: "version", "length", "abbrev", "addrsize"
	Path string // the damaged copy
	Unit uint64 // the damaged unit's offset in .debug_info
	// Theirs is what debug/dwarf says of the same bytes: dwarf.New's
	// error, else the first error its Reader meets in the unit.
	Theirs error
}

// CorruptUnitHeaders builds a program of two compile units (the c-layouts
// fixture's source and a small second file) with gcc's DWARF 5, and
// writes copies of it with the second unit's header damaged: its
// version made 7, its length run past the section's end, its
// abbreviations' offset put past .debug_abbrev, its address size made 3.
func CorruptUnitHeaders(t testing.TB) []HeaderDamage {
	t.Helper()
	dir := t.TempDir()
	second := filepath.Join(dir, "second.c")
	if err := os.WriteFile(second, []byte("struct second { int a; char b; } second_var;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "two-units")
	src := filepath.Join(Root(t), "testdata/fixtures/c-layouts/layouts.c")
	if out, err := exec.Command("gcc", "-g", "-gdwarf-5", "-O0", "-o", prog, src, second).CombinedOutput(); err != nil {
		Skipf(t, "gcc: %v %s", err, out)
	}
	good, ef, _ := ReadDWARF(t, prog)
	info, abbrev := ef.Section(".debug_info"), ef.Section(".debug_abbrev")
	if info == nil || abbrev == nil || info.Flags&elf.SHF_COMPRESSED != 0 || ef.ByteOrder != binary.LittleEndian {
		t.Fatalf("%s: want plain little-endian .debug_info and .debug_abbrev", prog)
	}
	sec := good[info.Offset : info.Offset+info.Size]
	unit := uint64(4 + binary.LittleEndian.Uint32(sec)) // the second unit
	if unit+12 > uint64(len(sec)) || binary.LittleEndian.Uint16(sec[unit+4:]) != 5 {
		t.Fatalf("%s: no second DWARF 5 unit at %#x", prog, unit)
	}
	damages := []struct {
		name  string
		at    uint64 // in the unit header
		size  int
		value uint32
	}{
		{"version", 4, 2, 7},
		{"length", 0, 4, uint32(len(sec))},
		{"abbrev", 8, 4, uint32(abbrev.Size + 0x100)},
		{"addrsize", 7, 1, 3},
	}
	var out []HeaderDamage
	for _, d := range damages {
		b := bytes.Clone(good)
		at := info.Offset + unit + d.at
		switch d.size {
		case 1:
			b[at] = byte(d.value)
		case 2:
			binary.LittleEndian.PutUint16(b[at:], uint16(d.value))
		case 4:
			binary.LittleEndian.PutUint32(b[at:], d.value)
		}
		p := filepath.Join(dir, "bad-"+d.name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		out = append(out, HeaderDamage{Name: d.name, Path: p, Unit: unit, Theirs: readUnit(b, unit)})
	}
	return out
}

// readUnit is debug/dwarf's error for the ELF image b: dwarf.New's, else
// the first its Reader meets in the unit at off.
func readUnit(b []byte, off uint64) error {
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	d, err := ef.DWARF()
	if err != nil {
		return err
	}
	r := d.Reader()
	r.Seek(dwarf.Offset(off))
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return err
		}
	}
}

package testutil

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"os"
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

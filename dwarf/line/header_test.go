package line

import (
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestLineHeader: the line program header gcc writes in DWARF 5 passes the
// check; the same header claiming a directory table whose entries have no
// fields, or more directories than its bytes hold, fails it (debug/dwarf
// alone spent minutes and gigabytes reading 2^32 entries; FuzzLoad keeps
// such a file as a seed).
func TestLineHeader(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "a.o")
	src := filepath.Join(testutil.Root(t), "testdata", "fixtures", "c-layouts", "layouts.c")
	if out, err := exec.Command("gcc", "-gdwarf-5", "-O1", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	ef, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ef.Section(".debug_line").Data()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHeader(b, 0, binary.LittleEndian); err != nil {
		t.Fatalf("gcc's header: %v", err)
	}
	// The 32-bit header: unit_length 4, version 2, address and selector
	// sizes 2, header_length 4, five one-byte fields, opcode_base, then
	// opcode_base-1 lengths and the directory entry format count.
	if binary.LittleEndian.Uint16(b[4:]) != 5 {
		t.Fatalf("gcc wrote version %d, not 5", binary.LittleEndian.Uint16(b[4:]))
	}
	opcodeBase := int(b[17])
	formats := 18 + opcodeBase - 1

	noFields := append([]byte(nil), b...)
	noFields[formats] = 0
	// The directory count follows the (now absent) formats: make it large.
	noFields[formats+1] = 0xff
	if err := CheckHeader(noFields, 0, binary.LittleEndian); err == nil || !strings.Contains(err.Error(), "without fields") {
		t.Errorf("a directory table without fields: %v", err)
	}

	// The directory count is the ULEB after the format pairs.
	p := formats + 1 + 2*int(b[formats])
	if b[p]&0x80 != 0 {
		t.Fatalf("a directory count of more than a byte: %#x", b[p])
	}
	huge := append([]byte(nil), b[:p]...)
	huge = append(huge, 0xff, 0xff, 0xff, 0xff, 0x0f) // 2^32-1, in the same header
	huge = append(huge, b[p+1:]...)
	hlen := binary.LittleEndian.Uint32(huge[8:]) + 4
	binary.LittleEndian.PutUint32(huge[8:], hlen)
	binary.LittleEndian.PutUint32(huge[0:], binary.LittleEndian.Uint32(huge[0:])+4)
	if err := CheckHeader(huge, 0, binary.LittleEndian); err == nil || !strings.Contains(err.Error(), "directory entries in a header of") {
		t.Errorf("4294967295 directories: %v", err)
	}

}

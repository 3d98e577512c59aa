package line_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/testutil"
)

// seedProgram is the .debug_line of an object gcc builds from the
// c-layouts fixture with flags, and its .debug_line_str.
func seedProgram(t testing.TB, flags ...string) (lineSec, lineStr []byte) {
	t.Helper()
	obj := filepath.Join(t.TempDir(), "a.o")
	src := filepath.Join(testutil.Root(t), "testdata", "fixtures", "c-layouts", "layouts.c")
	args := append([]string{"-O1", "-c", "-o", obj, src}, flags...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	return sections(t, obj)
}

// binaryOrder is the byte order of the files the tests build.
var binaryOrder = binary.LittleEndian

// sections are the .debug_line and .debug_line_str of the ELF file path.
func sections(t testing.TB, path string) (lineSec, lineStr []byte) {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if lineSec, err = ef.Section(".debug_line").Data(); err != nil {
		t.Fatal(err)
	}
	if s := ef.Section(".debug_line_str"); s != nil {
		lineStr, _ = s.Data()
	}
	return lineSec, lineStr
}

// checkError fails t unless err is a *line.DecodeError naming a section
// and an offset inside it (size bytes).
func checkError(t *testing.T, err error, size int) {
	t.Helper()
	var de *line.DecodeError
	if !errors.As(err, &de) || de.Section == "" || de.Offset < 0 || de.Offset > int64(size) {
		t.Fatalf("error %v (%T): want a *line.DecodeError with a section and an offset within %d bytes", err, err, size)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("section %s at offset %#x", de.Section, de.Offset)) {
		t.Fatalf("error %q does not say its section and offset", err)
	}
}

// FuzzProgram: a corrupted line program reads as rows or as an error
// that names the section and an offset in it, never a panic.
func FuzzProgram(f *testing.F) {
	for _, flags := range [][]string{{"-g"}, {"-gdwarf-2", "-gstrict-dwarf"}, {"-gdwarf-4"}, {"-gdwarf-5"}} {
		b, str := seedProgram(f, flags...)
		f.Add(b, str)
	}
	f.Fuzz(func(t *testing.T, b, str []byte) {
		s := &line.Sections{Line: b, Str: str, LineStr: str, StrOffsets: str, Order: binary.LittleEndian}
		u := &line.Unit{CompDir: "/src", AddrSize: 8, StrOffsetsBase: 8}
		for off := int64(0); off < int64(len(b)); {
			p, err := line.New(s, off, u)
			if err != nil {
				checkError(t, err, len(b))
				return
			}
			if _, err := p.Table(); err != nil {
				checkError(t, err, len(b))
			}
			next := off + 4 + int64(binary.LittleEndian.Uint32(b[off:]))
			if next <= off || p.Dwarf64 {
				return
			}
			off = next
		}
	})
}

// TestCorruptHeader: the DWARF 5 header gcc writes reads; the same header
// with a directory table whose entries have no fields, with more
// directories than its bytes hold, or with a header length past the
// program's end is an error at the program's offset (debug/dwarf alone
// spent minutes and gigabytes reading 2^32 directories).
func TestCorruptHeader(t *testing.T) {
	b, str := seedProgram(t, "-gdwarf-5")
	s := &line.Sections{Line: b, LineStr: str, Order: binary.LittleEndian}
	u := &line.Unit{AddrSize: 8}
	p, err := line.New(s, 0, u)
	if err != nil {
		t.Fatalf("gcc's header: %v", err)
	}
	if p.Version != 5 || len(p.Files) < 2 || p.Files[1].Dir >= uint64(len(p.Dirs)) {
		t.Fatalf("gcc's header: version %d, %d files: want version 5 with files in its directories", p.Version, len(p.Files))
	}
	// The 32-bit header: unit_length 4, version 2, address and selector
	// sizes 2, header_length 4, five one-byte fields, opcode_base, then
	// opcode_base-1 lengths and the directory entry format count.
	opcodeBase := int(b[17])
	formats := 18 + opcodeBase - 1
	bad := func(what string, c []byte, want string) {
		t.Helper()
		_, err := line.New(&line.Sections{Line: c, LineStr: str, Order: binary.LittleEndian}, 0, u)
		checkError(t, err, len(c))
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	noFields := bytes.Clone(b)
	noFields[formats] = 0
	noFields[formats+1] = 0xff // the directory count follows the (now absent) formats
	bad("a directory table without fields", noFields, "without fields")

	p0 := formats + 1 + 2*int(b[formats]) // the directory count
	if b[p0]&0x80 != 0 {
		t.Fatalf("a directory count of more than a byte: %#x", b[p0])
	}
	huge := append(bytes.Clone(b[:p0]), 0xff, 0xff, 0xff, 0xff, 0x0f) // 2^32-1, in the same header
	huge = append(huge, b[p0+1:]...)
	binary.LittleEndian.PutUint32(huge[8:], binary.LittleEndian.Uint32(huge[8:])+4)
	binary.LittleEndian.PutUint32(huge[0:], binary.LittleEndian.Uint32(huge[0:])+4)
	bad("4294967295 directories", huge, "directory entries in a header of")

	long := bytes.Clone(b)
	binary.LittleEndian.PutUint32(long[8:], 0xfffffff0)
	bad("a header length past the program", long, "past the program's end")

	badOp := bytes.Clone(b)
	badOp[18+3-1] = 3 // DW_LNS_advance_line's operand count
	bad("DW_LNS_advance_line with 3 operands", badOp, "standard opcode 3 with 3 operands")
}

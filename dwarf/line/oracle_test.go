package line_test

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/dwarftest"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// oracleFiles are the binaries the decoder is checked on, with the least
// number of rows each must hold: glibc's, python3.11d's and libstdc++'s
// debug info (GCC 12, DWARF 5 with .debug_line_str), Go, Rust and Zig
// programs, clang's DWARF 5 (DW_FORM_data16 digests), GCC's DWARF 2 and
// both kinds of split DWARF's skeletons.
func oracleFiles(t *testing.T) map[string]int {
	t.Helper()
	files := map[string]int{
		testutil.DebugFile(testutil.RealBinary(t, "libc")):        250_000,
		testutil.DebugFile(testutil.RealBinary(t, "python3.11d")): 450_000,
		testutil.DebugFile(testutil.RealBinary(t, "libstdc++")):   120_000,
	}
	for name, least := range map[string]int{"go-cmd": 500_000, "rust-real": 130_000, "zig-std": 35_000,
		"cpp-real-clang": 10_000, "c-layouts-dwarf2": 150} {
		files[testutil.Fixture(t, name).Path] = least
	}
	split := testutil.Fixture(t, "c-split").Path
	files[split] = 150
	files[filepath.Join(filepath.Dir(split), "c-split4")] = 150
	return files
}

// TestOracle: every row of every unit's line program (address, op
// index, file, line, column, is_stmt, basic_block, prologue_end,
// epilogue_begin, discriminator, end_sequence) and every unit's file
// table are debug/dwarf's LineReader's.
func TestOracle(t *testing.T) {
	for path, least := range oracleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			units, rows := compareFile(t, path)
			t.Logf("%s: %d units, %d rows", path, units, rows)
			if rows < least || units == 0 {
				t.Errorf("%d rows in %d units compared, want at least %d rows", rows, units, least)
			}
		})
	}
}

// compareFile compares the line programs of every unit of path.
func compareFile(t *testing.T, path string) (units, rows int) {
	ef, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := dwarftest.Data(ef)
	if err != nil {
		t.Fatal(err)
	}
	s := &line.Sections{Line: ef.DWARFSection(".debug_line"), Str: ef.DWARFSection(".debug_str"),
		LineStr: ef.DWARFSection(".debug_line_str"), Order: ef.ByteOrder}
	for r := d.Reader(); ; {
		cu, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if cu == nil {
			return units, rows
		}
		r.SkipChildren()
		off, ok := cu.Val(dwarf.AttrStmtList).(int64)
		if !ok {
			continue
		}
		want, err := d.LineReader(cu)
		if err != nil {
			t.Fatalf("unit at %#x: debug/dwarf: %v", cu.Offset, err)
		}
		u := &line.Unit{AddrSize: int(ef.PointerSize())}
		u.CompDir, _ = cu.Val(dwarf.AttrCompDir).(string)
		p, err := line.New(s, off, u)
		if err != nil {
			t.Fatalf("unit at %#x: %v", cu.Offset, err)
		}
		n, err := compareUnit(want, p)
		if err != nil {
			t.Fatalf("unit at %#x, program at %#x: %v", cu.Offset, off, err)
		}
		units++
		rows += n
	}
}

// compareUnit compares the file table and every row of one program.
func compareUnit(want *dwarf.LineReader, p *line.Program) (int, error) {
	if err := sameFiles(want.Files(), p.Files); err != nil {
		return 0, err
	}
	got := p.Reader()
	var we dwarf.LineEntry
	var ge line.Row
	for n := 0; ; n++ {
		werr, gerr := want.Next(&we), got.Next(&ge)
		if werr != nil || gerr != nil {
			if errors.Is(werr, io.EOF) && errors.Is(gerr, io.EOF) {
				return n, sameFiles(want.Files(), got.Files())
			}
			return n, fmt.Errorf("row %d: debug/dwarf %v, line %v", n, werr, gerr)
		}
		file := ""
		if ge.File >= 0 && ge.File < len(got.Files()) && got.Files()[ge.File] != nil {
			file = got.Files()[ge.File].Name
		}
		wfile := ""
		if we.File != nil {
			wfile = we.File.Name
		}
		w := line.Row{Addr: we.Address, OpIndex: we.OpIndex, Line: we.Line, Column: we.Column, ISA: we.ISA,
			Discriminator: we.Discriminator, Stmt: we.IsStmt, BasicBlock: we.BasicBlock, PrologueEnd: we.PrologueEnd,
			EpilogueBegin: we.EpilogueBegin, EndSequence: we.EndSequence}
		g := ge
		g.File, g.View = 0, 0
		if g != w || file != wfile {
			return n, fmt.Errorf("row %d: got %+v in %q, want %+v in %q", n, g, file, w, wfile)
		}
	}
}

func sameFiles(want []*dwarf.LineFile, got []*line.File) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d files, want %d", len(got), len(want))
	}
	for i := range want {
		switch {
		case (want[i] == nil) != (got[i] == nil):
			return fmt.Errorf("file %d: got %v, want %v", i, got[i], want[i])
		case want[i] == nil:
		case want[i].Name != got[i].Name || want[i].Mtime != got[i].MTime || uint64(want[i].Length) != got[i].Size:
			return fmt.Errorf("file %d: got %+v, want %+v", i, *got[i], *want[i])
		}
	}
	return nil
}

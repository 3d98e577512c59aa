package cfi

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/testutil"
)

// The fixtures checked against the tools: build lines of testdata's
// sources, and the installed C library.
var oracleFixtures = []string{
	"c-O2", "c-O0", "c-both", "clang-O2",
	"c-debug-frame-v1", "c-debug-frame-v3", "c-debug-frame-v4", "clang-debug-frame-64",
	"rust", "go", "arm64", "arm64-fp", "asm", "asm-llvm", "libc",
}

// TestOracles: at every address where a row can start (every location
// readelf or llvm-dwarfdump shows, every FDE bound, every row of ours) the
// table has the CFA, return address and frame pointer rules both tools
// interpret from the file, and covers exactly the addresses their FDEs do
// (.eh_frame's where both sections describe an address). The tables are
// piecewise constant, so agreeing at every possible step agrees everywhere.
func TestOracles(t *testing.T) {
	for _, name := range oracleFixtures {
		t.Run(name, func(t *testing.T) {
			path := fixture(t, name)
			f := open(t, path)
			rows := table(t, path)
			checkInvariants(t, rows)
			both := f.Section(".eh_frame") != nil && (f.Section(".debug_frame") != nil || f.Section(".zdebug_frame") != nil)
			for _, o := range []*oracle{readelfOracle(t, path, f.Machine), llvmOracle(t, path, f.Machine)} {
				if o.failed != "" {
					t.Logf("%s cannot read the file (%s): not checked by it", o.tool, o.failed)
					continue
				}
				n := len(o.fdes[0]) + len(o.fdes[1])
				if n == 0 {
					t.Fatalf("%s shows no FDE", o.tool)
				}
				if both && (len(o.fdes[0]) == 0 || len(o.fdes[1]) == 0) {
					t.Errorf("%s shows FDEs of one section only", o.tool)
				}
				sw := newSweep(o)
				pcs := o.checkpoints(rows)
				bad := 0
				for _, pc := range pcs {
					w, ok := sw.at(pc)
					r, covered := Lookup(rows, pc)
					if !o.agree(r, covered, w, ok) {
						if bad++; bad <= 8 {
							t.Errorf("%s at %#x: ours %v %v %v (covered %v), %s %q %q %q (covered %v)",
								name, pc, r.CFA, r.RA, r.FP, covered, o.tool, w.cfa, w.ra, w.fp, ok)
						}
					}
				}
				t.Logf("%s: %d FDEs (.eh_frame %d, .debug_frame %d), %d addresses checked, %d disagree",
					o.tool, n, len(o.fdes[0]), len(o.fdes[1]), len(pcs), bad)
			}
			t.Logf("%d rows; %s", len(rows), census(rows))
		})
	}
}

// census counts the rule kinds of covered rows, which the unwinder must
// handle or fall back on.
func census(rows []Row) string {
	cfa, ra, fp := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range rows {
		if !r.Covered {
			continue
		}
		switch {
		case r.CFA.PLT:
			cfa["plt"]++
		case r.CFA.Expr:
			cfa["expr"]++
		default:
			cfa[fmt.Sprintf("r%d", r.CFA.Reg)]++
		}
		ra[r.RA.Kind.String()]++
		fp[r.FP.Kind.String()]++
	}
	return fmt.Sprintf("CFA %v, RA %v, FP %v", cfa, ra, fp)
}

// checkInvariants checks the shape Table promises.
func checkInvariants(t testing.TB, rows []Row) {
	t.Helper()
	for i, r := range rows {
		if i > 0 && r.PC <= rows[i-1].PC {
			t.Fatalf("row %d at %#x is not after row %d at %#x", i, r.PC, i-1, rows[i-1].PC)
		}
		if i > 0 && r.sameRules(rows[i-1]) {
			t.Fatalf("rows %d and %d (%#x) are identical", i-1, i, r.PC)
		}
		if !r.Covered && (r.CFA != CFA{} || r.RA != Rule{} || r.FP != Rule{}) {
			t.Fatalf("gap row %d at %#x has rules", i, r.PC)
		}
		if got, ok := Lookup(rows, r.PC); ok != r.Covered || ok && got != r {
			t.Fatalf("Lookup(%#x) = %+v, %v; want row %d %+v", r.PC, got, ok, i, r)
		}
	}
	if n := len(rows); n > 0 {
		if rows[n-1].Covered {
			t.Fatalf("the last row (%#x) is covered", rows[n-1].PC)
		}
		if _, ok := Lookup(rows, rows[0].PC-1); ok {
			t.Fatalf("Lookup before the first row is covered")
		}
	}
}

// symbols returns the addresses of the functions and labels nm lists in
// the text section.
func symbols(t *testing.T, path string) map[string]uint64 {
	syms := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(tool(t, "nm", path)))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && (fs[1] == "T" || fs[1] == "t") {
			addr, err := strconv.ParseUint(fs[0], 16, 64)
			if err != nil {
				t.Fatalf("nm: %q", sc.Text())
			}
			syms[fs[2]] = addr
		}
	}
	return syms
}

// TestEntryRows: at the first instruction of the C fixture's functions
// (addresses from nm), the CFA is the stack pointer plus the machine's
// entry distance, and the return address is where the call put it: at
// CFA-8 on amd64, still in x30 on arm64.
func TestEntryRows(t *testing.T) {
	for _, name := range []string{"c-O2", "c-O0", "clang-O2", "arm64", "arm64-fp"} {
		t.Run(name, func(t *testing.T) {
			path := fixture(t, name)
			a, err := arch.ForMachine(open(t, path).Machine)
			if err != nil {
				t.Fatal(err)
			}
			wantRA := Rule{Kind: Offset, Offset: -8}
			if a.EntryCFA == 0 {
				wantRA = Rule{Kind: SameValue}
			}
			want := CFA{Reg: uint16(a.SPReg), Offset: a.EntryCFA}
			rows := table(t, path)
			syms := symbols(t, path)
			first := "main"
			if strings.HasPrefix(name, "arm64") {
				first = "_start"
			}
			for _, fn := range []string{first, "outer", "inner"} {
				addr, ok := syms[fn]
				if !ok {
					t.Errorf("nm shows no %s", fn)
					continue
				}
				r, ok := Lookup(rows, addr)
				if !ok || r.CFA != want || r.RA != wantRA {
					t.Errorf("%s at %#x: %v %v (covered %v), want %v %v", fn, addr, r.CFA, r.RA, ok, want, wantRA)
				}
			}
		})
	}
}

// TestEncodings: the FDEs of the assembly fixture whose addresses are in
// encodings neither readelf nor llvm-dwarfdump decodes (ULEB128 and
// SLEB128 relative to .text, relative to the GOT, through a pointer in
// .data, aligned) give, at their function (nm), the rows of their absptr
// twin, which TestOracles checks against both tools.
func TestEncodings(t *testing.T) {
	path := fixture(t, "asm-exotic")
	rows := table(t, path)
	syms := symbols(t, path)
	// rowsOf returns the rows of function name, addresses made relative.
	rowsOf := func(name string) []Row {
		lo, ok1 := syms[name]
		hi, ok2 := syms[name+"_end"]
		if !ok1 || !ok2 {
			t.Fatalf("nm shows no %s or %s_end", name, name)
		}
		var out []Row
		for pc := lo; pc < hi; pc++ {
			r, ok := Lookup(rows, pc)
			if !ok {
				r = Row{}
			}
			r.PC = pc - lo
			if n := len(out); n == 0 || !out[n-1].sameRules(r) {
				out = append(out, r)
			}
		}
		return out
	}
	want := rowsOf("h_absptr")
	if len(want) != 4 {
		t.Fatalf("h_absptr has %d rows: %+v", len(want), want)
	}
	for _, name := range []string{"h_udata4", "h_udata8", "h_sdata4", "h_sdata8", "h_signed",
		"h_uleb_textrel", "h_sleb_textrel", "h_datarel", "h_indirect", "h_aligned"} {
		if got := rowsOf(name); !slices.Equal(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}

// TestRefused: a machine without tables (RISC-V) and a relocatable
// object are errors, not wrong rows.
func TestRefused(t *testing.T) {
	if _, err := Table(open(t, fixture(t, "riscv64"))); !errors.Is(err, arch.ErrUnsupportedArch) {
		t.Errorf("riscv64: %v, want arch.ErrUnsupportedArch", err)
	}
	if _, err := Table(open(t, fixture(t, "c-object"))); err == nil || !strings.Contains(err.Error(), "relocatable") {
		t.Errorf("object file: %v", err)
	}
}

// TestCompressed: the .debug_frame objcopy compresses (GNU .zdebug_frame,
// and SHF_COMPRESSED with zlib and zstd) reads as the plain one.
func TestCompressed(t *testing.T) {
	src := fixture(t, "c-debug-frame-v1")
	want := table(t, src)
	for _, mode := range []string{"zlib-gnu", "zlib-gabi", "zstd"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "z")
			if _, err := exec.LookPath("objcopy"); err != nil {
				testutil.Skipf(t, "%v", err)
			}
			if msg, err := exec.Command("objcopy", "--compress-debug-sections="+mode, src, out).CombinedOutput(); err != nil {
				if mode == "zstd" {
					t.Skipf("objcopy without zstd: %s", msg)
				}
				t.Fatalf("objcopy: %v\n%s", err, msg)
			}
			f := open(t, out)
			s := f.Section(".debug_frame")
			if mode == "zlib-gnu" {
				s = f.Section(".zdebug_frame")
			}
			if s == nil || mode != "zlib-gnu" && s.Flags&elf.SHF_COMPRESSED == 0 {
				t.Fatalf("objcopy did not compress .debug_frame")
			}
			if got := table(t, out); !slices.Equal(got, want) {
				t.Errorf("%d rows, want %d as uncompressed", len(got), len(want))
			}
		})
	}
}

// parseSection reads one section's bytes as Table does.
func parseSection(file, name string, data []byte, addr uint64, m *machine) ([]Row, error) {
	var b builder
	s := newSection(file, name, data, addr, name == ".eh_frame", m)
	if err := s.parse(&b, 0); err != nil {
		return nil, err
	}
	return b.table()
}

// entryOffsets walks a section's entries by their 32-bit lengths and
// returns the offsets of those that are not terminators, with whether each
// is a CIE.
func entryOffsets(b []byte, order binary.ByteOrder, eh bool) (offs []int, isCIE []bool) {
	for off := 0; off+8 <= len(b); {
		n := int(order.Uint32(b[off:]))
		if n != 0 {
			id := order.Uint32(b[off+4:])
			offs, isCIE = append(offs, off), append(isCIE, eh && id == 0 || !eh && id == 0xffffffff)
		}
		off += 4 + n
	}
	return offs, isCIE
}

// nopEnded returns the offsets of the FDEs whose instructions readelf
// shows ending with DW_CFA_nop, and the offsets just past them.
func nopEnded(t *testing.T, path, section string) map[int]bool {
	out := tool(t, "readelf", "--debug-dump=frames", path)
	fdes := map[int]bool{}
	in, cur, last := false, -1, ""
	header := regexp.MustCompile(`^([0-9a-f]{8}) [0-9a-f]+ [0-9a-f]+ FDE`)
	flush := func() {
		if cur >= 0 && last == "DW_CFA_nop" {
			fdes[cur] = true
		}
		cur, last = -1, ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Contents of the ") {
			flush()
			in = strings.Contains(line, section+" ")
			continue
		}
		if !in {
			continue
		}
		if m := header.FindStringSubmatch(line); m != nil {
			flush()
			off, _ := strconv.ParseUint(m[1], 16, 32)
			cur = int(off)
		} else if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "DW_CFA_") {
			last = f[0]
		} else if len(f) > 0 && cur >= 0 {
			flush()
		}
	}
	flush()
	return fdes
}

// TestCorrupt: damage to real sections comes back as one *DecodeError
// naming the file, the section and the offset of the entry or the
// instruction at fault.
func TestCorrupt(t *testing.T) {
	path := fixture(t, "c-O2")
	f := open(t, path)
	eh, addr := rawSection(t, path, ".eh_frame")
	order := f.ByteOrder
	offs, isCIE := entryOffsets(eh, order, true)
	var fdes []int
	cieOff := -1
	for i, o := range offs {
		if isCIE[i] {
			cieOff = o
		} else {
			fdes = append(fdes, o)
		}
	}
	nops := nopEnded(t, path, ".eh_frame")
	nopFDE := -1
	for _, o := range fdes {
		if nops[o] && (nopFDE < 0 || o > nopFDE) {
			nopFDE = o
		}
	}
	if len(fdes) < 3 || cieOff < 0 || nopFDE < 0 {
		t.Fatalf("fixture .eh_frame: %d FDEs, CIE at %d, nop-ended FDE at %d", len(fdes), cieOff, nopFDE)
	}
	nopEnd := nopFDE + 4 + int(order.Uint32(eh[nopFDE:])) - 1
	last := fdes[len(fdes)-1]
	for _, c := range []struct {
		name    string
		damage  func(b []byte) []byte
		at      int
		message string
	}{
		{"truncated length", func(b []byte) []byte { return b[:last+2] }, last, "truncated entry length"},
		{"truncated entry", func(b []byte) []byte { return b[:last+10] }, last, "runs past the section's end"},
		{"length past the end", func(b []byte) []byte { order.PutUint32(b[fdes[1]:], 0xfffffff0); return b }, fdes[1], "runs past the section's end"},
		{"unknown instruction", func(b []byte) []byte { b[nopEnd] = 0x3e; return b }, nopEnd, "unknown call frame instruction 0x3e"},
		{"restore_state alone", func(b []byte) []byte { b[nopEnd] = opRestoreState; return b }, nopEnd, "without DW_CFA_remember_state"},
		{"CIE pointer to an FDE", func(b []byte) []byte {
			order.PutUint32(b[fdes[2]+4:], uint32(fdes[2]+4-fdes[1]))
			return b
		}, fdes[1], "not a CIE"},
		{"CIE version", func(b []byte) []byte { b[cieOff+8] = 2; return b }, cieOff, "CIE version 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.damage(slices.Clone(eh))
			_, err := parseSection(path, ".eh_frame", b, addr, testMachine(f))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *DecodeError", err)
			}
			if de.File != path || de.Section != ".eh_frame" || de.Offset != uint64(c.at) || !strings.Contains(de.Err.Error(), c.message) {
				t.Errorf("got %q, want offset %#x and %q", err, c.at, c.message)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
	t.Run("64-bit length truncated", func(t *testing.T) {
		p := fixture(t, "clang-debug-frame-64")
		b, _ := rawSection(t, p, ".debug_frame")
		if order.Uint32(b) != 0xffffffff {
			t.Fatalf("fixture .debug_frame is not 64-bit DWARF")
		}
		_, err := parseSection(p, ".debug_frame", b[:8], 0, testMachine(f))
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset != 0 || !strings.Contains(de.Err.Error(), "truncated entry length") {
			t.Errorf("got %v", err)
		}
	})
}

// BenchmarkTable reads the C library, the Go toolchain's go command (which
// ships without DWARF, so without call frame information), the Go fixture,
// and the files $CFI_BENCH lists (separated by colons).
func BenchmarkTable(b *testing.B) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goCmd = filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	}
	files := [][2]string{{"libc", libcPath}, {"go-command", goCmd}, {"go-fixture", fixture(b, "go")}}
	if extra := os.Getenv("CFI_BENCH"); extra != "" {
		for _, p := range filepath.SplitList(extra) {
			files = append(files, [2]string{filepath.Base(p), p})
		}
	}
	for _, file := range files {
		path := file[1]
		b.Run(file[0], func(b *testing.B) {
			if _, err := os.Stat(path); err != nil {
				b.Skip(err)
			}
			f := open(b, path)
			var rows []Row
			for b.Loop() {
				var err error
				if rows, err = Table(f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(rows)), "rows")
		})
	}
}

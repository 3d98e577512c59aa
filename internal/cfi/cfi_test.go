package cfi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// readelfRow is one row of readelf --debug-dump=frames-interp.
type readelfRow struct {
	loc     uint64
	cfa, ra string
	fp      string // "" when the FDE's table has no rbp column
}

// readelfRows parses the tables of the FDEs in section (".eh_frame" or
// ".debug_frame"), keeping the last row of each location.
func readelfRows(t *testing.T, path, section string) []readelfRow {
	t.Helper()
	// readelf exits 1 over a missing separate debug file, after its
	// dump.
	out, err := exec.Command("readelf", "--debug-dump=frames-interp", path).Output()
	if len(out) == 0 {
		testutil.Skipf(t, "readelf: %v", err)
	}
	var rows []readelfRow
	in := false
	var cols []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	fdeTable := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Contents of the ") {
			in = strings.HasPrefix(line, "Contents of the "+section+" ")
			continue
		}
		if !in {
			continue
		}
		fs := strings.Fields(line)
		switch {
		case len(fs) == 0:
			fdeTable, cols = false, nil
		case len(fs) > 3 && fs[3] == "FDE":
			fdeTable = true
		case fdeTable && fs[0] == "LOC":
			cols = fs[1:]
		case fdeTable && cols != nil && len(fs) == len(cols)+1:
			loc, err := strconv.ParseUint(fs[0], 16, 64)
			if err != nil {
				t.Fatalf("readelf row %q", line)
			}
			r := readelfRow{loc: loc}
			for i, c := range cols {
				switch c {
				case "CFA":
					r.cfa = fs[i+1]
				case "ra":
					r.ra = fs[i+1]
				case "rbp":
					r.fp = fs[i+1]
				}
			}
			if n := len(rows); n > 0 && rows[n-1].loc == loc {
				rows[n-1] = r
			} else {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

var amd64Regs = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// readelfCFA prints a CFA rule as readelf does.
func readelfCFA(c CFA) string {
	if c.Expr {
		return "exp"
	}
	name := fmt.Sprintf("r%d", c.Reg)
	if int(c.Reg) < len(amd64Regs) {
		name = amd64Regs[c.Reg]
	}
	return fmt.Sprintf("%s%+d", name, c.Offset)
}

// readelfRule prints a register rule as readelf does ("u" for a rule
// the FDE never set, which is the same value for a callee-saved one).
func readelfRule(r Rule) string {
	switch r.Kind {
	case Offset:
		return fmt.Sprintf("c%+d", r.Offset)
	case ValOffset:
		return fmt.Sprintf("v%+d", r.Offset)
	case SameValue, Undefined:
		return "u"
	case Register:
		if int(r.Reg) < len(amd64Regs) {
			return amd64Regs[r.Reg]
		}
	case Expression:
		return "exp"
	}
	return "?"
}

func build(t *testing.T, tool string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		testutil.Skipf(t, "%s: %v", tool, err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "BIN", bin)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	return bin
}

// table reads bin's rows.
func table(t *testing.T, bin string) []Row {
	t.Helper()
	f, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := Table(f)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestReadelf: every row readelf interprets from a file's call frame
// information (the C compiler's .eh_frame with and without frame
// pointers, a Rust release build's, the C library's with its PLT rules,
// Go's .debug_frame) has the same CFA, return address and frame pointer
// rules in the table.
func TestReadelf(t *testing.T) {
	src := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	for _, c := range []struct {
		name, section string
		bin           func(t *testing.T) string
	}{
		{"c-O2", ".eh_frame", func(t *testing.T) string {
			return build(t, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(src, "cpu.c"))
		}},
		{"c-O0", ".eh_frame", func(t *testing.T) string {
			return build(t, "gcc", "-O0", "-g", "-o", "BIN", filepath.Join(src, "cpu.c"))
		}},
		{"rust", ".eh_frame", func(t *testing.T) string {
			return build(t, "rustc", "-C", "opt-level=3", "-g", "-o", "BIN", filepath.Join(src, "cpu.rs"))
		}},
		{"libc", ".eh_frame", func(t *testing.T) string {
			p := "/lib/x86_64-linux-gnu/libc.so.6"
			if _, err := os.Stat(p); err != nil {
				testutil.Skipf(t, "%v", err)
			}
			return p
		}},
		{"go", ".debug_frame", func(t *testing.T) string {
			return build(t, "go", "build", "-C", filepath.Join(src, "go"), "-o", "BIN", ".")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := c.bin(t)
			rows := table(t, bin)
			want := readelfRows(t, bin, c.section)
			if len(want) == 0 {
				t.Fatalf("readelf shows no %s rows", c.section)
			}
			bad := 0
			for _, w := range want {
				r, ok := Lookup(rows, w.loc)
				got := readelfRow{loc: w.loc, cfa: readelfCFA(r.CFA), ra: readelfRule(r.RA), fp: readelfRule(r.FP)}
				if w.fp == "" {
					got.fp = ""
				}
				if !ok || got != w {
					if bad++; bad <= 5 {
						t.Errorf("at %#x: got %+v (covered %v), readelf %+v", w.loc, got, ok, w)
					}
				}
			}
			plt := 0
			for _, r := range rows {
				if r.CFA.PLT {
					plt++
				}
			}
			t.Logf("%d rows, %d readelf rows checked, %d wrong, %d PLT rows", len(rows), len(want), bad, plt)
		})
	}
}

// TestEntryRows: at the first instruction of the C fixture's functions
// (from nm), the CFA is rsp+8 and the return address at CFA-8.
func TestEntryRows(t *testing.T) {
	src := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	bin := build(t, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(src, "cpu.c"))
	out, err := exec.Command("nm", bin).Output()
	if err != nil {
		testutil.Skipf(t, "nm: %v", err)
	}
	rows := table(t, bin)
	found := 0
	for _, l := range strings.Split(string(out), "\n") {
		fs := strings.Fields(l)
		if len(fs) != 3 || (fs[2] != "main" && fs[2] != "outer" && fs[2] != "inner") {
			continue
		}
		addr, _ := strconv.ParseUint(fs[0], 16, 64)
		r, ok := Lookup(rows, addr)
		if !ok || r.CFA != (CFA{Reg: 7, Offset: 8}) || r.RA != (Rule{Kind: Offset, Offset: -8}) {
			t.Errorf("%s at %#x: %+v (covered %v)", fs[2], addr, r, ok)
		}
		found++
	}
	if found != 3 {
		t.Errorf("nm showed %d of main, outer, inner", found)
	}
}

// FuzzTable: corrupt call frame information gives an error, never a
// panic or a hang.
func FuzzTable(f *testing.F) {
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/bin/true"} {
		if ef, err := elfx.Open(p); err == nil {
			if s := ef.Section(".eh_frame"); s != nil {
				if b, err := s.Data(); err == nil {
					f.Add(b[:min(len(b), 512)])
				}
			}
			ef.Close()
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := &parser{path: "fuzz", section: ".eh_frame", b: b, eh: true, order: binary.LittleEndian, ptrSize: 8, fp: 6, cies: map[uint64]*cie{}}
		fdes, err := p.parse()
		if err == nil {
			merge(fdes)
		}
		p.eh, p.section, p.cies = false, ".debug_frame", map[uint64]*cie{}
		p.parse()
	})
}

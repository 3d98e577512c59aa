package dwarf_test

import (
	"bytes"
	stddwarf "debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestBadInput checks that every kind of bad input gives one line that names
// the file, and an error rather than a panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	c := testutil.Fixture(t, "c-layouts")
	good, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stripped := filepath.Join(dir, "stripped")
	if out, err := exec.Command("strip", "-o", stripped, c.Path).CombinedOutput(); err != nil {
		testutil.Skipf(t, "strip: %v %s", err, out)
	}
	cases := []struct {
		name, path string
		want       string
		sentinel   error
	}{
		{"missing", filepath.Join(dir, "nope"), "no such file", nil},
		{"empty", write("empty", nil), "not an ELF file", nil},
		{"text", write("text", []byte("#!/bin/sh\necho hi\n")), "not an ELF file", nil},
		{"directory", dir, "is a directory", nil},
		{"truncated header", write("trunc", good[:40]), "corrupt ELF", nil},
		{"stripped", stripped, "no .debug_info", types.ErrNoDebugInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dwarf.Load(tc.path, nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error has several lines: %q", msg)
			}
			if !strings.Contains(msg, tc.path) {
				t.Errorf("error does not name the file: %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q does not wrap %v", msg, tc.sentinel)
			}
		})
	}
}

// TestCorruptSections flips bytes across the DWARF sections of a real
// binary: every result is a Spec or an error, never a panic or a hang.
func TestCorruptSections(t *testing.T) {
	c := testutil.Fixture(t, "c-layouts")
	good, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	errs := 0
	for i := 0; i < 200; i++ {
		b := bytes.Clone(good)
		// Deterministic spread of corruptions over the whole file.
		for j := 0; j < 8; j++ {
			pos := (i*7919 + j*104729) % len(b)
			b[pos] ^= byte(0x5a + i + j)
		}
		f, err := dwarf.OpenReader(bytes.NewReader(b), "corrupt", nil)
		if err != nil {
			continue
		}
		_, err = f.Types()
		if err == nil {
			continue
		}
		errs++
		var de *elfx.DecodeError
		if msg := err.Error(); !strings.HasPrefix(msg, "corrupt: section .debug_") || !errors.As(err, &de) {
			t.Errorf("error does not name the file and section: %v", err)
		}
	}
	if errs < 10 {
		t.Errorf("%d of 200 corruptions made an error: want at least 10", errs)
	}
}

func FuzzLoad(f *testing.F) {
	// Small objects keep the fuzzer fast: a few KB of ELF and DWARF each.
	src := filepath.Join(f.TempDir(), "seed.c")
	code := "struct s { char a; int b:3, c:5; long d[2][3]; struct s *next; union { int x; float y; } u; };\n" +
		"enum e { A = -1, B = 7 }; typedef struct { enum e e; void (*fn)(int, ...); } t; struct s v; t w;\n" +
		"static inline int g(struct s *p, int k) { return p->b * k; }\n" +
		"int f(struct s *p, int k) { int r = g(p, k); return r + g(p->next, r); }\nvoid _start(void) { f(&v, 3); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		f.Fatal(err)
	}
	for i, flags := range [][]string{{"-c", "-g"}, {"-c", "-gdwarf-2", "-gstrict-dwarf"}, {"-c", "-gdwarf-5", "-gz"}, {"-O2", "-g", "-nostdlib", "-Wl,--unresolved-symbols=ignore-all"}} {
		obj := filepath.Join(f.TempDir(), fmt.Sprintf("seed%d.o", i))
		args := append([]string{"-o", obj, src}, flags...)
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			testutil.Skipf(f, "gcc: %v %s", err, out)
		}
		b, err := os.ReadFile(obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := dwarf.OpenReader(bytes.NewReader(b), "fuzz", nil)
		if err != nil {
			return
		}
		_, _ = d.Types()
		_, _ = d.Globals()
		fns, _ := d.Functions(&dwarf.FuncOptions{Params: true})
		n := 0
		for _, fn := range fns {
			if fn.LowPC != 0 && n < 3 {
				n++
				_, _ = d.Lines(fn)
				_, _ = d.VarsAt(fn.LowPC)
				_, _ = d.CallSites(fn.LowPC)
				_, _, _ = d.Global(fn.LowPC, "v")
			}
		}
	})
}

// TestCorruptRecord damages one record, the name of a struct member,
// which debug/dwarf then refuses to decode: the struct is left out, the
// other types are read, and the error names the section and the member's
// offset.
func TestCorruptRecord(t *testing.T) {
	c := testutil.Fixture(t, "c-layouts")
	path, owner, at := testutil.CorruptMember(t, c.Path)
	want, err := dwarf.Load(c.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := dwarf.Load(path, nil)
	if err == nil || spec == nil {
		t.Fatalf("Load = %v, %v: want the rest of the types and an error", spec, err)
	}
	msg := err.Error()
	var de *elfx.DecodeError
	switch {
	case !errors.Is(err, types.ErrPartial):
		t.Errorf("error %q does not wrap types.ErrPartial", msg)
	case !errors.As(err, &de) || de.Section != ".debug_info" || de.Offset != at:
		t.Errorf("error %q: want a DecodeError of .debug_info at the member's offset %#x", msg, at)
	case strings.Contains(msg, "\n") || !strings.Contains(msg, path) ||
		!strings.Contains(msg, fmt.Sprintf("section .debug_info at offset %#x", at)):
		t.Errorf("error %q: want one line naming the file, the section and offset %#x", msg, at)
	}
	if len(spec.Lookup(owner)) > 0 {
		t.Errorf("struct %s, whose member is corrupt, was read", owner)
	}
	kept := 0
	for _, wt := range want.Types() {
		if name := wt.TypeName(); name != owner && len(spec.Lookup(name)) > 0 {
			kept++
		}
	}
	if n := len(want.Types()); kept < n-3 || n < 20 {
		t.Errorf("%d of %d other types read: want all but the few that hold %s", kept, n-1, owner)
	}
}

// TestCorruptLineProgram: a DWARF 5 line program header whose length runs
// past its program (the second unit's, at a non-zero offset): Lines says
// so naming .debug_line and the program's offset, and LineAt finds no row
// there, rather than a wrong one.
func TestCorruptLineProgram(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.c": "int g(int);\nint main(void) { return g(2); }\n",
		"b.c": "int g(int x) { return x * 3; }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(dir, "prog")
	cmd := exec.Command("gcc", "-g", "-gdwarf-5", "-O0", "-o", prog, "a.c", "b.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	good, ef, d := testutil.ReadDWARF(t, prog)
	var off int64 // b.c's line program
	for r := d.Reader(); ; {
		cu, err := r.Next()
		if err != nil || cu == nil {
			t.Fatalf("no unit for b.c (%v)", err)
		}
		r.SkipChildren()
		if name, _ := cu.Val(stddwarf.AttrName).(string); name == "b.c" {
			off, _ = cu.Val(stddwarf.AttrStmtList).(int64)
			break
		}
	}
	line := ef.Section(".debug_line")
	if off == 0 || line == nil || line.Flags&elf.SHF_COMPRESSED != 0 {
		t.Fatalf("b.c's line program at %#x of .debug_line: want a plain section and a second program", off)
	}
	at := line.Offset + uint64(off)
	if v := binary.LittleEndian.Uint16(good[at+4:]); v != 5 {
		t.Fatalf("line program version %d, want 5", v)
	}
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint32(bad[at+8:], 0xfffffff0) // header_length
	path := filepath.Join(dir, "bad-line-header")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := dwarf.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fns, err := f.Functions(nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*types.Func{}
	for _, fn := range fns {
		if fn.LowPC != 0 {
			byName[fn.Name] = fn
		}
	}
	g, main := byName["g"], byName["main"]
	if g == nil || main == nil {
		t.Fatal("no functions g and main")
	}
	_, err = f.Lines(g)
	var de *elfx.DecodeError
	want := fmt.Sprintf("%s: section .debug_line at offset %#x: ", path, off)
	if !errors.As(err, &de) || de.Section != ".debug_line" || de.Offset != uint64(off) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Lines(g): %v; want an error starting %q", err, want)
	}
	if row, ok := f.LineAt(g.LowPC); ok {
		t.Errorf("LineAt(%#x) = %+v from a corrupt line program", g.LowPC, row)
	}
	if rows, err := f.Lines(main); err != nil || len(rows) == 0 {
		t.Errorf("Lines(main), whose unit's program is whole: %d rows, %v", len(rows), err)
	}
}

// TestUnreadableUnit: a DIE whose abbreviation code no table holds (the
// first child of the second of two compile units) costs that unit's DIEs
// from it: Functions keeps the first unit's functions and warns once,
// naming .debug_info and the DIE's offset; Types keeps the first unit's
// types and returns a *PartialError naming the same offset. debug/dwarf's Reader, the oracle,
// gives the offsets of the units and of the DIE damaged.
func TestUnreadableUnit(t *testing.T) {
	dir := t.TempDir()
	srcs := map[string]string{
		"a.c": "struct first { int a; long b; };\n__attribute__((noinline)) int first_fn(struct first *p) { return p->a + (int)p->b; }\n",
		"b.c": "struct second { char c; double d; };\n" +
			"__attribute__((noinline)) double second_fn(struct second *p) { return p->d + p->c; }\n" +
			"int main(void) { struct second s = {1, 2}; return (int)second_fn(&s); }\n",
	}
	var args []string
	for _, name := range []string{"a.c", "b.c"} {
		src, p := srcs[name], filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	bin := filepath.Join(dir, "two")
	if out, err := exec.Command("gcc", append([]string{"-g", "-O1", "-o", bin}, args...)...).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	b, ef, d := testutil.ReadDWARF(t, bin)
	// The first DIE inside the unit of second_fn: its code becomes 0x7f.
	var at stddwarf.Offset
	r := d.Reader()
	for e, _ := r.Next(); e != nil; e, _ = r.Next() {
		if e.Tag != stddwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		if name, _ := e.Val(stddwarf.AttrName).(string); strings.HasSuffix(name, "b.c") {
			child, _ := r.Next()
			at = child.Offset
			break
		}
		r.SkipChildren()
	}
	info := ef.Section(".debug_info")
	if at == 0 || info == nil || info.Flags&elf.SHF_COMPRESSED != 0 || b[info.Offset+uint64(at)] >= 0x7f {
		t.Fatalf("no DIE with a one-byte code in b.c's unit (at %#x)", at)
	}
	b[info.Offset+uint64(at)] = 0x7f
	var warns []string
	f, err := dwarf.OpenReader(bytes.NewReader(b), "damaged", &dwarf.Options{Warn: func(s string) { warns = append(warns, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fns, err := f.Functions(nil)
	if err != nil {
		t.Fatalf("Functions: %v", err)
	}
	names := map[string]bool{}
	for _, fn := range fns {
		names[fn.Name] = true
	}
	where := fmt.Sprintf("damaged: section .debug_info at offset %#x: ", at)
	if !names["first_fn"] || names["second_fn"] || names["main"] {
		t.Errorf("functions %v: want first_fn, and neither second_fn nor main", names)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], where+fmt.Sprintf("unreadable DIE: the DIEs from %#x to ", at)) {
		t.Errorf("warnings %q: want one, starting %q", warns, where)
	}
	spec, err := f.Types()
	var de *elfx.DecodeError
	if !errors.Is(err, types.ErrPartial) || !errors.As(err, &de) || de.Offset != uint64(at) || !strings.HasPrefix(err.Error(), where) {
		t.Fatalf("Types: %v; want a partial result, the error starting %q", err, where)
	}
	if len(spec.Lookup("first")) != 1 || len(spec.Lookup("second")) != 0 {
		t.Errorf("types: struct first %d times, struct second %d times; want 1 and 0", len(spec.Lookup("first")), len(spec.Lookup("second")))
	}
}

// TestCorruptUnitHeader: a unit header damaged (its version, its length,
// its abbreviations' offset, its address size) refuses the file with one
// line naming the file, .debug_info and the unit's offset, where
// debug/dwarf refuses the same bytes too (dwarf.New, or its Reader at the
// unit's first DIE: it checks neither the abbreviations' offset nor the
// address size when it opens).
func TestCorruptUnitHeader(t *testing.T) {
	damages := testutil.CorruptUnitHeaders(t)
	if len(damages) != 4 {
		t.Fatalf("%d damages", len(damages))
	}
	for _, d := range damages {
		t.Run(d.Name, func(t *testing.T) {
			if d.Theirs == nil {
				t.Fatalf("debug/dwarf reads the damaged unit")
			}
			f, err := dwarf.Open(d.Path, nil)
			if err == nil {
				f.Close()
				t.Fatalf("opened; debug/dwarf says %v", d.Theirs)
			}
			var de *elfx.DecodeError
			if !errors.As(err, &de) || de.File != d.Path || de.Section != ".debug_info" || de.Offset != d.Unit {
				t.Fatalf("%v: want a decode error of %s, .debug_info at %#x", err, d.Path, d.Unit)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "unit header") {
				t.Fatalf("%q: want one line about the unit header", msg)
			}
			t.Logf("ours: %v\n\tdebug/dwarf: %v", de.Err, d.Theirs)
		})
	}
}

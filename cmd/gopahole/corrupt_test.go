package main

import (
	stddwarf "debug/dwarf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCorruptRecord: a file with one corrupt record prints the other
// types, then one line naming the file, section and offset, exit status 1.
func TestCorruptRecord(t *testing.T) {
	c := testutil.Fixture(t, "c-layouts")
	bad, owner, at := testutil.CorruptMember(t, c.Path)
	_, want, _ := run(c.Path)
	code, stdout, stderr := run(bad)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: ", bad, at)
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
		t.Errorf("stderr %q: want one line starting %q", stderr, line)
	}
	if strings.Contains(stdout, "struct "+owner+" {") {
		t.Errorf("struct %s, whose member is corrupt, was printed", owner)
	}
	n := strings.Count(want, "\n};")
	if got := strings.Count(stdout, "\n};"); n < 10 || got != n-1 {
		t.Errorf("%d types printed, want %d (all but struct %s)", got, n-1, owner)
	}
}

// TestCorruptUnitHeader: a damaged unit header (testutil.CorruptUnitHeaders)
// prints one line naming the file, .debug_info and the unit's offset, and
// exits 1; dwarf's TestCorruptUnitHeader compares the errors with
// debug/dwarf's.
func TestCorruptUnitHeader(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, d := range testutil.CorruptUnitHeaders(t) {
		code, stdout, stderr := run(d.Path)
		line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: unit header: ", d.Path, d.Unit)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q: want 1, none, one line starting %q", d.Name, code, len(stdout), stderr, line)
		}
	}
}

// TestCorruptDIE: a DIE whose abbreviation code no table holds
// (testutil.CorruptDIEs) costs the child of the unit DIE that holds it,
// up to its DW_AT_sibling, or the rest of the unit without one, as
// readelf and debug/dwarf stop there. Every type pahole prints of the
// whole program is printed as pahole prints it when none of the DIEs
// it needs (testutil.TypeDIEs) is lost, else not at all, in the whole
// dump and by its name (-C); then one line names the file, .debug_info
// and the DIE, exit status 1.
func TestCorruptDIE(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, dd := range testutil.CorruptDIEs(t) {
		t.Run(dd.Name, func(t *testing.T) {
			want := paholeOut(t, dd.Good)
			_, _, d := testutil.ReadDWARF(t, dd.Good)
			lost := lostTypes(t, d, dd)
			code, stdout, stderr := run(dd.Bad)
			line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: unreadable DIE: ", dd.Bad, dd.Off)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
				t.Errorf("exit %d, stderr %q: want 1, one line starting %q", code, stderr, line)
			}
			kept, left := 0, 0
			for _, block := range strings.SplitAfter(want, "\n};\n") {
				head, _, _ := strings.Cut(strings.TrimLeft(block, "\n"), "\n")
				if head == "" {
					continue
				}
				fields := strings.Fields(head)
				_, one, _ := run("-C", fields[len(fields)-2], dd.Bad) // -C NAME reads the names' types only
				switch {
				case lost[head]:
					left++
					if strings.Contains(stdout, head+"\n") || one != "" {
						t.Errorf("%q printed; it needs a DIE lost", head)
					}
				case !strings.Contains(stdout, strings.TrimLeft(block, "\n")) || one != strings.TrimLeft(block, "\n"):
					t.Errorf("%q not printed as pahole prints it from the whole file:\n%s\ngopahole:\n%s\ngopahole -C:\n%s", head, block, stdout, one)
				default:
					kept++
				}
			}
			t.Logf("%d types printed as pahole prints them, %d left out", kept, left)
			if kept < 4 || (dd.Name == "member" && left < 1) {
				t.Errorf("%d types printed as pahole prints them, %d left out: want 4 or more, and one left out", kept, left)
			}
		})
	}
}

// lostTypes are the heads of pahole's blocks ("struct alpha {") of the
// named types of d that need a DIE dd loses.
func lostTypes(t *testing.T, d *stddwarf.Data, dd testutil.DIEDamage) map[string]bool {
	lost := map[string]bool{}
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		name, _ := e.Val(stddwarf.AttrName).(string)
		kind := map[stddwarf.Tag]string{stddwarf.TagStructType: "struct", stddwarf.TagUnionType: "union", stddwarf.TagEnumerationType: "enum"}[e.Tag]
		if name == "" || kind == "" {
			continue
		}
		for _, off := range testutil.TypeDIEs(t, d, e.Offset) {
			if dd.Lost(off) {
				lost[kind+" "+name+" {"] = true
			}
		}
	}
	return lost
}

// TestCorruptDIEHeader: --format=c of a file with a DIE that does not
// read (testutil.CorruptDIEs) writes the header of the structs and unions
// that need none of the DIEs lost (as debug/dwarf reads the undamaged
// program: lostTypes), each block as the undamaged program's header has
// it (an enum too, when a struct kept needs it), and none of the others; clang compiles it, its _Static_asserts holding;
// then one line names the file, .debug_info and the DIE, exit status 1.
func TestCorruptDIEHeader(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	for _, dd := range testutil.CorruptDIEs(t) {
		t.Run(dd.Name, func(t *testing.T) {
			_, _, d := testutil.ReadDWARF(t, dd.Good)
			lost := lostTypes(t, d, dd)
			code, want, stderr := run("--format=c", dd.Good)
			if code != 0 {
				t.Fatalf("undamaged: exit %d: %s", code, stderr)
			}
			code, got, stderr := run("--format=c", dd.Bad)
			line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: unreadable DIE: ", dd.Bad, dd.Off)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
				t.Errorf("exit %d, stderr %q: want 1, one line starting %q", code, stderr, line)
			}
			kept, left := 0, 0
			for _, block := range strings.Split(want, "\n\n") {
				head := headOf(block)
				switch {
				case head == "":
				case lost[head]:
					left++
					if strings.Contains(got, "\n"+head+"\n") {
						t.Errorf("%q written; it needs a DIE lost", head)
					}
				case strings.HasPrefix(head, "enum ") && !strings.Contains(got, "\n"+head+"\n"):
					// written only for a struct that needs it
				case !strings.Contains(got, "\n\n"+block+"\n"):
					t.Errorf("%q not written as the undamaged program's header has it:\n%s\ndamaged:\n%s", head, block, got)
				default:
					kept++
				}
			}
			t.Logf("%d types written as from the undamaged program, %d left out", kept, left)
			if kept < 4 || (dd.Name == "member" && left < 1) {
				t.Errorf("%d types kept, %d left out: want 4 or more, and one left out", kept, left)
			}
			src := filepath.Join(t.TempDir(), "partial.c")
			if err := os.WriteFile(src, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(clang, "-fsyntax-only", src).CombinedOutput(); err != nil {
				t.Errorf("clang -fsyntax-only of the header: %v\n%s", err, out)
			}
		})
	}
}

// headOf is the line of a header's block that opens a struct, union or
// enum definition ("struct alpha {"), "" for none.
func headOf(block string) string {
	for _, l := range strings.Split(block, "\n") {
		if strings.HasSuffix(l, " {") && !strings.HasPrefix(l, "\t") {
			return l
		}
	}
	return ""
}

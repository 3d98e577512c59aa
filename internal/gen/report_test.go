package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowsCountFailedPrograms: a program that failed to build or run
// under goprobe is in its build's row (the last field), and a build all
// of whose programs failed still has a row: a batch whose programs die
// never reads as a clean one.
func TestRowsCountFailedPrograms(t *testing.T) {
	ok := &Result{Build: "gcc-O2", Funcs: []*FuncResult{{Want: 20, Goprobe: 20, Trace: 20, TraceWant: 20, Reordered: 3}}}
	ss := AddFailed(Summarize([]*Result{ok}), map[string]int{"gcc-O2": 1, "go": 2, "clang-O2": 0})
	var buf bytes.Buffer
	WriteRows(&buf, ss, nil)
	rows := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(rows) != 2 {
		t.Fatalf("want rows for gcc-O2 and go, got:\n%s", buf.String())
	}
	for i, want := range []struct{ build, programs, reordered, failed string }{{"gcc-O2", "1", "3", "1"}, {"go", "0", "0", "2"}} {
		f := strings.Split(rows[i], "\t")
		if len(f) != 16 || f[0] != want.build || f[1] != want.programs || f[14] != want.reordered || f[15] != want.failed {
			t.Errorf("row %d = %q, want %d fields: %s, %s programs, %s events out of order, %s failed", i, rows[i], 16,
				want.build, want.programs, want.reordered, want.failed)
		}
	}
}

// TestGDBNotRunCountsPairs: when gdb cannot run on a program, each ? pair
// it was to judge is counted as one it made no stop at, not dropped.
func TestGDBNotRunCountsPairs(t *testing.T) {
	dir := t.TempDir()
	fr := &FuncResult{Symbol: "fn01", UnreadAt: map[string]int{"0x1100 a: why": 2, "0x1120 b: other": 1}}
	r := &Result{Build: "gcc-O2", Seed: 7, Bin: filepath.Join(dir, "missing"), Dir: dir, N: 20, Funcs: []*FuncResult{fr}}
	c, err := r.CheckUnread(-1)
	if err == nil {
		t.Fatal("CheckUnread on a missing program: no error")
	}
	if c.Compared() != 0 || len(c.NoStop) != 2 {
		t.Fatalf("compared %d, no stop %d (%q); want 0 and 2", c.Compared(), len(c.NoStop), c.NoStop)
	}
}

// TestAbsentArgumentIsUnread: a parameter a trace event leaves out is
// counted as a ? at its site, with the reason saying so, and goes to gdb
// with the call it was, like any other ?.
func TestAbsentArgumentIsUnread(t *testing.T) {
	fr := &FuncResult{}
	fr.noteArgs(0x1100, []specArg{{Name: "a"}, {Name: "c", Unavailable: "no location"}})
	fr.noteAbsent("0x1100", "a", 3)
	fr.noteAbsent("0x1100", "b", 4)
	fr.noteAbsent("0x1100", "c", 5)
	for _, k := range []string{"0x1100 a: left out of the event (goprobe printed no such argument)",
		"0x1100 b: left out of the event (goprobe printed no such argument)", "0x1100 c: no location"} {
		if fr.UnreadAt[k] != 1 {
			t.Errorf("UnreadAt[%q] = %d, want 1 (all: %v)", k, fr.UnreadAt[k], fr.UnreadAt)
		}
	}
	if h := fr.unreadHit["0x1100 b"]; len(h) != 1 || h[0] != 4 {
		t.Errorf("passes of 0x1100 b = %v, want [4]", h)
	}
}

// TestSameRecord: a run under goprobe whose record differs from the
// program's run alone (a call more, an argument changed) is an error
// naming the first line that differs; the same record is none.
func TestSameRecord(t *testing.T) {
	dir := t.TempDir()
	alone := "fn00 a=0\nfn01 a=3 b=4\nend 2\n"
	for _, c := range []struct{ probed, want string }{
		{alone, ""},
		{"fn00 a=0\nfn01 a=3 b=5\nend 2\n", `line 2: "fn01 a=3 b=5" where it wrote "fn01 a=3 b=4"`},
		{"fn00 a=0\n", `line 2: its end where it wrote "fn01 a=3 b=4"`},
	} {
		for name, text := range map[string]string{"base.rec": alone, "trace.rec": c.probed} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := sameRecord(dir, "trace")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("probed %q: %v, want %q", c.probed, err, c.want)
		}
	}
}

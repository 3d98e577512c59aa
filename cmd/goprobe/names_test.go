package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// statCount runs goprobe stat --json with args and returns the count of
// probe def, failing the test when goprobe fails; out is everything printed.
func statCount(t *testing.T, def string, args ...string) (int, string) {
	t.Helper()
	var pre, post []string
	for i, a := range args {
		if a == "--" {
			pre, post = args[:i], args[i:]
			break
		}
	}
	code, out, errs := runGoprobe(append(append(append([]string{"stat", "--json"}, pre...), def), post...)...)
	if code != 0 {
		t.Fatalf("goprobe stat %s %v: exit %d: %s", def, args, code, errs)
	}
	m := regexp.MustCompile(`\{"probe":"` + regexp.QuoteMeta(jsonEscape(def)) + `","count":(\d+),`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("goprobe stat %s: no count in\n%s", def, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n, out
}

func jsonEscape(s string) string {
	return strings.ReplaceAll(s, `"`, `\"`)
}

// TestStatPythonEvalFrame: goprobe's count of CPython's
// _PyEval_EvalFrameDefault (the -O2 interpreter, DWARF from python3.11-dbg,
// split hot and cold by GCC) equals bpftrace's on the symbol for the same
// deterministic script.
func TestStatPythonEvalFrame(t *testing.T) {
	needBPF(t)
	py := testutil.RealBinary(t, "python3.11")
	bpftrace, err := exec.LookPath("bpftrace")
	if err != nil {
		testutil.Skipf(t, "bpftrace not installed: %v", err)
	}
	script := filepath.Join(t.TempDir(), "calls.py")
	// 11.x inlines Python-to-Python calls into one C frame; a generator's
	// every resumption and each class body still enter the C function.
	src := "def gen(n):\n    for i in range(n):\n        yield i\n" +
		"class K:\n    pass\n" +
		"print(sum(gen(500)))\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONHASHSEED", "0")
	cmd := exec.Command(bpftrace, "-e", "uprobe:"+py+":_PyEval_EvalFrameDefault { @ = count(); }", "-c", py+" -S "+script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bpftrace: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^@: (\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no count from bpftrace:\n%s", out)
	}
	want, _ := strconv.Atoi(string(m[1]))
	got, gout := statCount(t, "_PyEval_EvalFrameDefault", "-x", py, "--", py, "-S", script)
	if got != want || want < 500 || !strings.Contains(gout, "124750") {
		t.Errorf("goprobe counted %d calls, bpftrace %d\n%s", got, want, gout)
	}
}

// buildPuts builds a C program that calls puts 100 times, then malloc,
// realloc and free once each and fopen and fclose once.
func buildPuts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "puts.c")
	prog := `#include <stdio.h>
#include <stdlib.h>
int main(void) {
	for (int i = 0; i < 100; i++)
		puts("x");
	void *p = malloc(10);
	p = realloc(p, 100);
	free(p);
	FILE *f = fopen("/dev/null", "r");
	if (f)
		fclose(f);
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "puts")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// TestStatLibcAliases: glibc's _IO_puts counts the program's 100 calls
// by its DWARF name and by its alias puts; free, fopen and realloc, which
// glibc defines as __libc_free, _IO_new_fopen and __libc_realloc, resolve
// by the names programs call them by (gofunct's TestLibcAliases finds
// them so).
func TestStatLibcAliases(t *testing.T) {
	needBPF(t)
	libc := testutil.RealBinary(t, "libc")
	prog := buildPuts(t)
	for _, def := range []string{"_IO_puts", "puts"} {
		if n, out := statCount(t, def, "-x", libc, "--", prog); n != 100 {
			t.Errorf("%s: %d calls, the program made 100\n%s", def, n, out)
		}
	}
	for def, min := range map[string]int{"free": 1, "fopen": 1, "realloc": 1, "malloc": 1} {
		if n, out := statCount(t, def, "-x", libc, "--", prog); n < min {
			t.Errorf("%s: %d calls, want at least %d\n%s", def, n, min, out)
		}
	}
}

// TestStatRustStrippedDemangled: in rust-real without DWARF, functions
// are probed by the demangled names gofunct prints (gofunct's
// TestRustStrippedDemangled), and count what the program's header says:
// parse_line and Stats::record N times, checksum (two instances of a
// generic, printed alike) 2*N.
func TestStatRustStrippedDemangled(t *testing.T) {
	b := testutil.Fixture(t, "rust-real-stripped")
	needBPF(t)
	const n = 40
	for def, want := range map[string]int{"real::parse_line": n, "real::Stats::record": n, "real::checksum": 2 * n} {
		if got, out := statCount(t, def, "--", b.Path, strconv.Itoa(n)); got != want {
			t.Errorf("%s: %d calls, the program made %d\n%s", def, got, want, out)
		}
	}
}

// TestStatCppTemplates: on cpp-real a template's full name selects one
// instance; its name without template arguments, which several instances
// share, is a one-line error listing them.
func TestStatCppTemplates(t *testing.T) {
	b := testutil.Fixture(t, "cpp-real")
	code, _, errs := runGoprobe("gen", "-x", b.Path, "real::sum_small")
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "real::sum_small<long, 4ul>") ||
		!strings.Contains(errs, "real::sum_small<double, 2ul>") {
		t.Errorf("short name: exit %d, %q", code, errs)
	}
	needBPF(t)
	const n = 12
	for def, want := range map[string]int{
		"real::sum_small<long, 4ul>":   n,
		"real::sum_small<double, 2ul>": n,
		"real::total<int, long>":       1, // summary() totals each map once
		"real::record_event":           4 * n,
	} {
		if got, out := statCount(t, def, "--", b.Path, strconv.Itoa(n)); got != want {
			t.Errorf("%s: %d calls, the program made %d\n%s", def, got, want, out)
		}
	}
}

// TestStatCloneOnly: functions GCC kept only as clones (which gofunct's
// TestCloneOnly lists) are probed by their own name and by the clone's
// symbol, raw or demangled: cpp-real's scale_by (scale_by.constprop.0)
// and weigh (weigh.constprop.0.isra.0), and a C program's f
// (f.constprop.0).
func TestStatCloneOnly(t *testing.T) {
	b := testutil.Fixture(t, "cpp-real")
	cprog := cmdtest.BuildCloneC(t, true)
	needBPF(t)
	const n = 9
	for def, want := range map[string]int{
		"real::scale_by":                    2 * n,
		"real::scale_by.constprop.0":        2 * n,
		"_ZN4realL8scale_byEll.constprop.0": 2 * n,
		"real::weigh":                       n,
		"real::weigh.constprop.0.isra.0":    n,
	} {
		if got, out := statCount(t, def, "--", b.Path, strconv.Itoa(n)); got != want {
			t.Errorf("%s: %d calls, the program made %d\n%s", def, got, want, out)
		}
	}
	for _, def := range []string{"f", "f.constprop.0"} {
		got, out := statCount(t, def, "--", cprog, strconv.Itoa(n))
		if !strings.Contains(out, fmt.Sprintf("f calls: %d ", got)) || got != n {
			t.Errorf("%s: %d calls\n%s", def, got, out)
		}
	}
}

// TestStatWithoutDWARF: a C program built with -O2 and no -g has f only
// as its clone's symbol (gofunct's TestGofunctWithoutDWARF lists it), and
// goprobe counts that symbol.
func TestStatWithoutDWARF(t *testing.T) {
	bin := cmdtest.BuildCloneC(t, false)
	needBPF(t)
	if got, out := statCount(t, "f.constprop.0", "--", bin, "6"); got != 6 {
		t.Errorf("f.constprop.0: %d calls\n%s", got, out)
	}
}

// TestStatGoCloneNames: Go functions called clone, part and isra are
// probed as themselves, never taken for GCC clones (gofunct's
// TestGoCloneNames lists them so).
func TestStatGoCloneNames(t *testing.T) {
	bin := cmdtest.BuildGoCloneNames(t)
	needBPF(t)
	for _, def := range cmdtest.GoCloneNames {
		if got, out := statCount(t, def, "--", bin, "7"); got != 7 {
			t.Errorf("%s: %d calls, the program made 7\n%s", def, got, out)
		}
	}
}

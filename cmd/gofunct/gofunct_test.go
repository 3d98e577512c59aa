package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

func runGofunct(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := gofunct(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestGofunctErrors: bad input is one line naming the file, exit 1.
func TestGofunctErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(notELF, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testutil.Fixture(t, "c-layouts").Path
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{notELF}, 1, "not an ELF"},
		{[]string{"-f", "no_such_fn", c}, 1, "no function named no_such_fn"},
		{[]string{}, 2, "arg"},
	} {
		code, _, stderr := runGofunct(tc.args...)
		if code != tc.code || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestGofunctCorruptUnitHeader: a damaged unit header
// (testutil.CorruptUnitHeaders) prints one line naming the file,
// .debug_info and the unit's offset, and exits 1.
func TestGofunctCorruptUnitHeader(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, d := range testutil.CorruptUnitHeaders(t) {
		code, stdout, stderr := runGofunct(d.Path)
		line := fmt.Sprintf("gofunct: %s: section .debug_info at offset %#x: unit header: ", d.Path, d.Unit)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q: want 1, none, one line starting %q", d.Name, code, len(stdout), stderr, line)
		}
	}
}

// TestGofunctJSON: the Go fixture's functions, with Go names and the
// main function at a real address.
func TestGofunctJSON(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	code, stdout, stderr := runGofunct("--json", "-f", "main.main,github.com/prometheus/client_golang/prometheus.(*counter).Add", b.Path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var fns []struct {
		Name  string `json:"name"`
		Lang  string `json:"lang"`
		LowPC uint64 `json:"low_pc"`
		Size  uint64 `json:"size"`
	}
	if err := json.Unmarshal([]byte(stdout), &fns); err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 {
		t.Fatalf("%d functions: %s", len(fns), stdout)
	}
	for _, fn := range fns {
		if fn.Lang != "go" || fn.LowPC == 0 || fn.Size == 0 {
			t.Errorf("%+v", fn)
		}
	}
}

// buildInlC builds the C inline fixture with gcc's inlining report.
func buildInlC(t *testing.T) (bin string, report string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	bin = filepath.Join(t.TempDir(), "inl")
	cmd := exec.Command(gcc, "-O2", "-g", "-fopt-info-inline-optimized", "-o", bin, "inl.c")
	cmd.Dir = filepath.Join(testutil.Root(t), "dwarf", "testdata", "inline")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin, string(out)
}

// TestGofunctQueries: -a, -H, -p, -L and -V on the C fixture agree with
// gcc's report and the source.
func TestGofunctQueries(t *testing.T) {
	bin, report := buildInlC(t)
	re := regexp.MustCompile(`inl\.c:(\d+):(\d+): optimized: +Inlining (\w+)/\d+ into (\w+)`)
	ms := re.FindAllStringSubmatch(report, -1)
	if len(ms) == 0 {
		t.Fatalf("no inlinings reported:\n%s", report)
	}
	// -H: sq is not declared inline; gcc inlined it.
	_, out, _ := runGofunct("-H", bin)
	if !strings.Contains(out, "sq\n") || strings.Contains(out, "add3") {
		t.Errorf("-H: %q", out)
	}
	// --json: each inline site's entry, asked with -a, names the callee
	// at the call line gcc reported.
	_, js, _ := runGofunct("--json", bin)
	var fns []struct {
		Name   string `json:"name"`
		LowPC  uint64 `json:"low_pc"`
		Params []struct {
			Name, Location string
		} `json:"params"`
		Sites []struct {
			Caller   string `json:"caller"`
			EntryPC  uint64 `json:"entry_pc"`
			CallLine int    `json:"call_line"`
		} `json:"inline_sites"`
	}
	if err := json.Unmarshal([]byte(js), &fns); err != nil {
		t.Fatal(err)
	}
	sites := 0
	for _, fn := range fns {
		for _, s := range fn.Sites {
			if s.Caller != "work" && s.Caller != "main" {
				continue
			}
			code, out, errs := runGofunct("-a", fmt.Sprintf("%#x", s.EntryPC), bin)
			if code != 0 || !strings.HasPrefix(out, s.Caller+"+") || !strings.Contains(out, fmt.Sprintf("inlined %s at ", fn.Name)) ||
				!strings.Contains(out, fmt.Sprintf("inl.c:%d:", s.CallLine)) {
				t.Errorf("-a %#x: exit %d %q %s", s.EntryPC, code, out, errs)
			}
			sites++
		}
	}
	if sites < len(ms) {
		t.Errorf("%d sites checked, gcc reported %d", sites, len(ms))
	}
	// -p: the parameter counts of the source.
	_, out, _ = runGofunct("-p", "-f", "work,add3", bin)
	if out != "work: 1\nadd3: 3\n" && out != "add3: 3\nwork: 1\n" {
		t.Errorf("-p: %q", out)
	}
	// -L work: each line gcc reports an inlining at is marked with it.
	_, out, _ = runGofunct("-L", "work", bin)
	for _, m := range ms {
		if m[4] != "work" {
			continue
		}
		found := false
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) > 2 && f[0] == m[1] && strings.Contains(l, "[inline "+m[3]+"@") {
				found = true
			}
		}
		if !found {
			t.Errorf("-L work: line %s does not mark the inlining of %s:\n%s", m[1], m[3], out)
		}
	}
	// --vars work: the parameters at entry, where --locations puts them.
	_, proto, _ := runGofunct("--locations", "-f", "work", bin)
	_, vars, _ := runGofunct("--vars", "work", bin)
	loc := regexp.MustCompile(`/\* n: (\S+) \*/`).FindStringSubmatch(proto)
	if loc == nil || !regexp.MustCompile(`param\s+n\s+int\s+`+loc[1]).MatchString(vars) {
		t.Errorf("--locations %q, --vars %q", proto, vars)
	}
	// Lines without code, functions only inlined: one line saying so.
	for _, args := range [][]string{{"--vars", "work:1", bin}, {"-L", "add3", bin}, {"-a", "0x1", bin}, {"-a", "zz", bin}} {
		code, _, errs := runGofunct(args...)
		if code != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}

// TestGofunctPrototypes: Go prototypes in Go syntax, with the float
// argument marked unreadable; the client_golang methods taking *counter.
func TestGofunctPrototypes(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	const add = "github.com/prometheus/client_golang/prometheus.(*counter).Add"
	code, out, errs := runGofunct("--locations", "-f", add, b.Path)
	if code != 0 {
		t.Fatal(errs)
	}
	if !regexp.MustCompile(`^func \(c \*counter\) Add\(v float64\) // c: RAX, v: X0 \(not readable by uprobe\)\n$`).MatchString(out) {
		t.Errorf("--locations: %q", out)
	}
	if code, out, _ = runGofunct("-P", "-f", add, b.Path); code != 0 || out != "func (c *counter) Add(v float64)\n" {
		t.Errorf("-P: %q", out)
	}
	_, out, _ = runGofunct("-c", "counter", b.Path)
	if !strings.Contains(out, add+"\n") {
		t.Errorf("-c counter: %q", out)
	}
}

// TestGofunctStripped: a stripped Go binary still lists its functions.
func TestGofunctStripped(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	stripped := filepath.Join(t.TempDir(), "stripped")
	if out, err := exec.Command("strip", "-o", stripped, b.Path).CombinedOutput(); err != nil {
		testutil.Skipf(t, "strip: %v %s", err, out)
	}
	code, out, errs := runGofunct("-s", "-f", "main.main", stripped)
	if code != 0 || !strings.HasPrefix(out, "main.main: ") {
		t.Errorf("exit %d %q %q", code, out, errs)
	}
	code, _, errs = runGofunct("-P", stripped)
	if code != 1 || !strings.Contains(errs, "stripped") {
		t.Errorf("-P on stripped: exit %d %q", code, errs)
	}
}

// TestGofunctGolden keeps gofunct's printed views of the C inline fixture
// (go test ./cmd/gofunct -update rewrites them); each is printed twice
// and must not change between runs.
func TestGofunctGolden(t *testing.T) {
	bin, _ := buildInlC(t)
	root := testutil.Root(t)
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"c-prototypes.txt", []string{"--locations"}},
		{"c-pfunct-P.txt", []string{"-P"}},
		{"c-inline.txt", []string{"--inline"}},
		{"c-lines.txt", []string{"-L", "work"}},
		{"c-vars.txt", []string{"--vars", "work:8"}},
		{"c-stats.txt", []string{"-I"}},
		{"c.json", []string{"--json", "-f", "work,add3"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, first, errs := runGofunct(append(tc.args, bin)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if _, again, _ := runGofunct(append(tc.args, bin)...); again != first {
				t.Fatalf("two runs differ")
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", "gofunct", tc.file), []byte(strings.ReplaceAll(first, root, "$ROOT")))
		})
	}
}

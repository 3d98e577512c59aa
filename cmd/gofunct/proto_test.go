package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// variadicByReadelf reads `readelf --debug-dump=info` of path and returns
// the DW_AT_name of every function with code (a subprogram with
// DW_AT_low_pc or DW_AT_ranges) whose own entry, or an entry its
// abstract_origin or specification leads to, has a
// DW_TAG_unspecified_parameters child; one name per function (the root of
// its chain).
func variadicByReadelf(t *testing.T, path string) []string {
	t.Helper()
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		testutil.Skipf(t, "readelf not installed: %v", err)
	}
	cmd := exec.Command(readelf, "--debug-dump=info", "--wide", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type die struct {
		tag, name    string
		origin       string
		code, varArg bool
	}
	head := regexp.MustCompile(`^ <(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((DW_TAG_\w+)\)`)
	attr := regexp.MustCompile(`^\s+<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$`)
	ref := regexp.MustCompile(`<0x([0-9a-f]+)>`)
	subs := map[string]*die{}
	var stack []*die
	var cur *die
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, " <") && !strings.Contains(line, "DW_AT_low_pc") && !strings.Contains(line, "DW_AT_ranges") &&
			!strings.Contains(line, "DW_AT_abstract_origin") && !strings.Contains(line, "DW_AT_specification") && !strings.Contains(line, "DW_AT_name") {
			continue
		}
		if m := head.FindStringSubmatch(line); m != nil {
			depth := 0
			for _, c := range m[1] {
				depth = depth*10 + int(c-'0')
			}
			if depth < len(stack) {
				stack = stack[:depth]
			}
			for len(stack) < depth {
				stack = append(stack, nil)
			}
			cur = &die{tag: m[3]}
			stack = append(stack, cur)
			switch {
			case cur.tag == "DW_TAG_subprogram":
				subs[strings.TrimLeft(m[2], "0")] = cur
			case cur.tag == "DW_TAG_unspecified_parameters" && depth > 0 && stack[depth-1] != nil && stack[depth-1].tag == "DW_TAG_subprogram":
				stack[depth-1].varArg = true
			}
			continue
		}
		m := attr.FindStringSubmatch(line)
		if m == nil || cur == nil {
			continue
		}
		switch m[1] {
		case "DW_AT_low_pc", "DW_AT_ranges":
			cur.code = true
		case "DW_AT_abstract_origin", "DW_AT_specification":
			if r := ref.FindStringSubmatch(m[2]); r != nil {
				cur.origin = strings.TrimLeft(r[1], "0")
			}
		case "DW_AT_name":
			v := m[2]
			// "(indirect string, offset: 0x2a): printf" or "(string) err".
			if i := strings.LastIndex(v, "): "); i >= 0 {
				v = v[i+3:]
			} else if i := strings.Index(v, ") "); strings.HasPrefix(v, "(") && i >= 0 {
				v = v[i+2:]
			}
			cur.name = strings.TrimSpace(v)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("readelf: %v", err)
	}
	roots := map[*die]bool{}
	for _, d := range subs {
		if !d.code {
			continue
		}
		variadic, root := false, d
		for s, i := d, 0; s != nil && i < 8; s, i = subs[s.origin], i+1 {
			variadic = variadic || s.varArg
			root = s
		}
		if variadic {
			roots[root] = true
		}
	}
	var names []string
	for r := range roots {
		names = append(names, r.name)
	}
	sort.Strings(names)
	return names
}

// TestVariadicLibc: the functions gofunct -P prints with "..." on glibc
// are the functions with code that DWARF (as readelf prints it) marks
// variadic, and printf is one of them.
func TestVariadicLibc(t *testing.T) {
	if testing.Short() {
		t.Skip("reads all of libc's DWARF with readelf")
	}
	libc := testutil.RealBinary(t, "libc")
	want := variadicByReadelf(t, testutil.DebugFile(libc))
	var got []string
	for _, fn := range gofunctJSON(t, libc) {
		if strings.HasSuffix(fn.Proto, "...)") {
			got = append(got, fn.Name)
		}
	}
	sort.Strings(got)
	if len(want) < 50 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gofunct prints %d variadic functions, readelf shows %d:\ngofunct: %v\nreadelf: %v", len(got), len(want), got, want)
	}
	code, out, errs := runGofunct("--locations", "-f", "printf", libc)
	if code != 0 || !strings.HasPrefix(out, "int __printf(const char *format, ...)") {
		t.Errorf("printf: exit %d %q %s", code, out, errs)
	}
}

// TestGoSingleResult: a Go function returning only error prints one
// result, though the compiler writes its ~r0 entry twice; named results
// the same.
func TestGoSingleResult(t *testing.T) {
	b := testutil.Fixture(t, "go-cmd")
	code, out, errs := runGofunct("-P", "-f", "syscall.Unsetenv,os.ReadDir,runtime.traceback2", b.Path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"func syscall.Unsetenv(key string) error",
		"func os.ReadDir(name string) ([]io/fs.DirEntry, error)",
		"(n int, lastN int)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	code, out, _ = runGofunct("-P", b.Path)
	if code != 0 {
		t.Fatal("gofunct -P failed")
	}
	// No result list repeats a type pair the way a doubled entry would.
	if n := strings.Count(out, "(error, error)"); n > 0 {
		t.Errorf("%d prototypes return (error, error)", n)
	}
}

// TestCppParameterPack: a variadic template's instance prints each
// parameter its pack expanded to (GCC names none of them).
func TestCppParameterPack(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		testutil.Skipf(t, "g++ not installed: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "pack.cc")
	prog := `#include <cstdio>
template <typename... A> __attribute__((noinline)) long total(long first, A... rest) {
	return (first + ... + (long)rest);
}
int main(int argc, char **) {
	std::printf("%ld\n", total(argc, 2, 3.5, 'c'));
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pack")
	if out, err := exec.Command(gxx, "-g", "-O2", "-std=c++17", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	code, out, errs := runGofunct("-P", "-f", "total<int, double, char>", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`^long int total<int, double, char>\(long int first, int[^,]*, double[^,]*, char[^,)]*\)`).MatchString(out) {
		t.Errorf("the pack's parameters are missing:\n%s", out)
	}
}

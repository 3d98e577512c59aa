package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// statsSrc has what pfunct's statistics count: local variables in
// nested blocks, goto labels, an inline function inlined twice, a struct
// parameter and result.
const statsSrc = `struct point { int x; int y; };
struct rect { struct point origin; int width; int height; };
typedef unsigned long size_type;
static inline int helper(int x) { return x * 2; }
int compute(int a, int b) { int tmp = helper(a); return tmp + b; }
void process(int *data, int len) {
	int i;
	for (i = 0; i < len; i++) {
		int v = compute(data[i], i);
		if (v < 0)
			goto fail;
		data[i] = v + helper(i);
	}
	return;
fail:
	data[0] = -1;
}
int retry(int n) {
again:
	if (n-- > 0)
		goto again;
	if (n == -5)
		goto done;
	return n;
done:
	return 0;
}
struct point *rect_origin(struct rect *r) { return &r->origin; }
struct point mk(int x) { struct point p = { x, x }; return p; }
size_type compute_size(size_type a, size_type b) { return a * b; }
void no_params(void) { }
`

// inlineSrc is inlined the way pfunct 1.24 counts (-I, -t) at -O2:
// helper into compute and, with compute, into process.
const inlineSrc = `static inline int helper(int x) { return x * 2; }
int compute(int a, int b) { int tmp = helper(a); return tmp + b; }
void process(int *data, int len) { int i; for (i = 0; i < len; i++) data[i] = compute(data[i], i); }
int noparms(void) { return 42; }
`

// pfunctOf runs pfunct 1.24 with args, skipping the test without it.
func pfunctOf(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("pfunct"); err != nil {
		testutil.Skipf(t, "pfunct not installed: %v", err)
	}
	out, err := exec.Command("pfunct", args...).Output()
	if err != nil {
		t.Fatalf("pfunct %v: %v", args, err)
	}
	return string(out)
}

// sortedLines is s's non-empty lines, sorted.
func sortedLines(s string) string {
	var l []string
	for _, line := range strings.Split(s, "\n") {
		if line != "" {
			l = append(l, line)
		}
	}
	sort.Strings(l)
	return strings.Join(l, "\n")
}

func buildStats(t *testing.T, opt string) string {
	t.Helper()
	return buildObj(t, statsSrc, opt)
}

func buildObj(t *testing.T, code, opt string) string {
	t.Helper()
	dir := t.TempDir()
	src, obj := filepath.Join(dir, "stats.c"), filepath.Join(dir, "stats.o")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", opt, "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return obj
}

// TestPfunctOptions: pfunct's options that its regression tests use give
// pfunct 1.24's answers: --symtab byte for byte; -S, -g and -N the same
// rows (pfunct prints them in its hash order); -t the same total sizes
// and counts for the functions pfunct lists.
func TestPfunctOptions(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		obj := buildStats(t, opt)
		for _, args := range [][]string{{"--symtab"}, {"-S"}, {"-g"}, {"-N"}} {
			want := pfunctOf(t, append(args, obj)...)
			code, got, errs := runGofunct(append(args, obj)...)
			if args[0] != "--symtab" {
				want, got = sortedLines(want), sortedLines(got)
			}
			if code != 0 || got != want {
				t.Errorf("%s %v: exit %d %s\ngofunct:\n%s\npfunct:\n%s", opt, args, code, errs, got, want)
			}
		}
		if code, got, _ := runGofunct("-g", obj); code != 0 || !strings.Contains(got, "retry: 2") {
			t.Errorf("%s -g: want retry's two labels:\n%s", opt, got)
		}
		inl := buildObj(t, inlineSrc, opt)
		want := pfunctOf(t, "-t", inl)
		_, got, _ := runGofunct("-t", inl)
		rows := map[string]string{}
		for _, line := range strings.Split(got, "\n")[1:] {
			if f := strings.Fields(line); len(f) == 4 {
				rows[f[0]] = f[1] + " " + f[2]
			}
		}
		n := 0
		for _, line := range strings.Split(want, "\n")[1:] {
			f := strings.Fields(line)
			if len(f) != 5 {
				continue
			}
			n++
			if rows[f[0]] != f[1]+" "+f[2] {
				t.Errorf("%s -t: %s: total and count %q, pfunct's %s %s", opt, f[0], rows[f[0]], f[1], f[2])
			}
		}
		if opt == "-O2" && n == 0 {
			t.Errorf("-O2: pfunct -t listed nothing to compare:\n%s", want)
		}
	}
}

// TestPfunctCompile: --compile writes C that gcc compiles, whose
// _Static_asserts hold the structs to the binary's layout, with a body
// for every function pfunct lists; -b the declarations; -V -T each
// function's prototype and the variables its body declares, as pfunct
// -V -T names them.
func TestPfunctCompile(t *testing.T) {
	obj := buildStats(t, "-O0")
	code, out, errs := runGofunct("--compile", obj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "stubs.c")
	if err := os.WriteFile(c, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("gcc", "-c", "-o", filepath.Join(dir, "stubs.o"), c).CombinedOutput(); err != nil {
		t.Fatalf("gcc on --compile's output: %v\n%s\n%s", err, msg, out)
	}
	for _, name := range strings.Fields(pfunctOf(t, obj)) {
		if !strings.Contains(out, " "+name+"(") && !strings.Contains(out, "*"+name+"(") {
			t.Errorf("--compile: no %s", name)
		}
	}
	if !strings.Contains(out, "return *(struct point *)1;") || !strings.Contains(out, "return (void *)0;") {
		t.Errorf("--compile: missing the struct and pointer returns:\n%s", out)
	}
	_, one, _ := runGofunct("--compile=rect_origin", obj)
	if !strings.Contains(one, "struct point *rect_origin(struct rect *r)\n{") || strings.Contains(one, "compute(") {
		t.Errorf("--compile=rect_origin:\n%s", one)
	}
	_, decls, _ := runGofunct("-b", "-f", "compute_size", obj)
	if !strings.Contains(decls, "typedef unsigned long") || !strings.Contains(decls, "size_type compute_size(size_type a, size_type b);") {
		t.Errorf("-b -f compute_size:\n%s", decls)
	}
	_, verbose, _ := runGofunct("-V", "-T", "-f", "process", obj)
	pv := pfunctOf(t, "-V", "-T", obj)
	for _, v := range []string{"i", "v"} {
		if !strings.Contains(pv, "int "+v+";") || !strings.Contains(verbose, "\tint "+v+";") {
			t.Errorf("-V -T: variable %s: ours\n%s\npfunct's\n%s", v, verbose, pv)
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// paholeOut runs pahole 1.24 with args, skipping the test without it.
func paholeOut(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("pahole"); err != nil {
		testutil.Skipf(t, "pahole not installed: %v", err)
	}
	out, err := exec.Command("pahole", args...).Output()
	if err != nil {
		t.Fatalf("pahole %v: %v", args, err)
	}
	return string(out)
}

// TestPaholeParityGlibc: glibc's struct timex ends in anonymous bitfields
// (int :32), which DWARF does not record and pahole prints as its "Force
// padding:" guess; gopahole prints the same, and glibc's whole dump is
// pahole's byte for byte but for later pahole's notes of flexible arrays
// (as124).
func TestPaholeParityGlibc(t *testing.T) {
	debug := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	want := paholeOut(t, "-C", "timex", debug)
	if !strings.Contains(want, "int                        :32;") {
		t.Fatalf("pahole printed no forced padding:\n%s", want)
	}
	code, got, errs := run("-C", "timex", debug)
	if code != 0 || got != want {
		t.Errorf("exit %d %s\ngopahole:\n%s\npahole:\n%s", code, errs, got, want)
	}
	want = paholeOut(t, debug)
	code, got, errs = run(debug)
	got, notes := as124(got)
	if notes == 0 {
		t.Errorf("no notes of flexible arrays in glibc's dump")
	}
	if code != 0 || got != want {
		t.Errorf("glibc's dump differs from pahole's (exit %d %s): %d against %d bytes", code, errs, len(got), len(want))
	}
}

// TestForcePaddingNotBTF: pahole makes no forced-padding guess for BTF,
// which records no alignment; gopahole neither.
// The kernel's __kernel_timex has the same anonymous int :32 members as
// glibc's timex (BTF records none of them: 44 bytes of tail padding).
func TestForcePaddingNotBTF(t *testing.T) {
	if _, err := os.Stat(loader.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	code, got, errs := run("-C", "__kernel_timex")
	if code != 0 || !strings.Contains(got, "padding: 44") {
		t.Fatalf("exit %d %s: want __kernel_timex with 44 bytes of tail padding:\n%s", code, errs, got)
	}
	if strings.Contains(got, "Force padding") {
		t.Errorf("forced padding from BTF:\n%s", got)
	}
}

// TestRustNicheUnsigned: a niche discriminant in a u64 tag prints as the
// unsigned value Rust compares it with, not as a negative number.
func TestRustNicheUnsigned(t *testing.T) {
	bin := testutil.Fixture(t, "rust-real").Path
	code, out, errs := run(bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "discr: -") || !strings.Contains(out, "discr: 9223372036854775808") {
		t.Errorf("want u64 niche values unsigned:\n%s", grepLines(out, "discr:"))
	}
	code, js, _ := run("--json", bin)
	if code != 0 || strings.Contains(js, `"discr": -`) || !strings.Contains(js, `"discr": 9223372036854775808`) {
		t.Errorf("JSON: want u64 niche values unsigned:\n%s", grepLines(js, "discr"))
	}
}

// TestGenericSuggestsInstantiations: -C with a generic type's name (Go's
// main.Pair, its short name, a Rust generic) lists the instantiations the
// binary holds, where pahole finds nothing.
func TestGenericSuggestsInstantiations(t *testing.T) {
	for _, tc := range []struct{ fixture, name, want string }{
		{"go-layouts", "main.Pair", "main.Pair[int,string], main.Pair[int8,bool]"},
		{"go-layouts", "Pair", "main.Pair[int,string]"},
		{"rust-layouts", "Generic", "layouts::Generic<u32>, layouts::Generic<u8>"},
	} {
		code, out, errs := run("-C", tc.name, testutil.Fixture(t, tc.fixture).Path)
		if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "name an instantiation: ") || !strings.Contains(errs, tc.want) {
			t.Errorf("-C %s: exit %d, %q; want one line listing %s", tc.name, code, errs, tc.want)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return strings.Join(out, "\n")
}

// TestLookupParity: -C reads only the units that define the type (the
// first one, as pahole does) and prints what pahole prints for glibc's
// link_map and python3.11d's _typeobject, and what the full load prints.
func TestLookupParity(t *testing.T) {
	for _, tc := range []struct{ bin, name string }{{"libc", "link_map"}, {"python3.11d", "_typeobject"}} {
		path := testutil.DebugFile(testutil.RealBinary(t, tc.bin))
		want := paholeOut(t, "-C", tc.name, path)
		code, got, errs := run("-C", tc.name, path)
		if code != 0 || got != want {
			t.Errorf("%s -C %s: exit %d %s\ngopahole:\n%s\npahole:\n%s", tc.bin, tc.name, code, errs, got, want)
		}
		code, all, _ := run("-F", "dwarf", path)
		if code != 0 || !strings.Contains(all, got) {
			t.Errorf("%s -C %s: not the full load's text", tc.bin, tc.name)
		}
	}
}

// TestPaholeParityGlibcLookups: -C of a sample of glibc's structs (link_map
// in the first unit, which a lookup reads alone, and others in later units)
// prints what pahole -C prints.
func TestPaholeParityGlibcLookups(t *testing.T) {
	debug := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	dump := paholeOut(t, debug)
	names := []string{"link_map"}
	for _, line := range strings.Split(dump, "\n") {
		if name, ok := strings.CutPrefix(line, "struct "); ok && strings.HasSuffix(name, " {") && len(names) < 400 {
			names = append(names, strings.TrimSuffix(name, " {"))
		}
	}
	if len(names) < 100 {
		t.Fatalf("%d structs in pahole's dump, want 100", len(names))
	}
	n := 0
	for i := 0; i < len(names); i += 25 {
		want := paholeOut(t, "-C", names[i], debug)
		code, got, errs := run("-C", names[i], debug)
		if code != 0 || got != want {
			t.Errorf("-C %s: exit %d %s\ngopahole:\n%s\npahole:\n%s", names[i], code, errs, got, want)
		}
		n++
	}
	if n < 10 {
		t.Errorf("%d lookups compared, want 10", n)
	}
}

// TestPaholeParityTypedefsEnums: -C of a typedef that names no anonymous
// struct (FILE, pid_t, a function pointer's) or of an enum prints what
// pahole -C prints, on glibc's debug file and on kernel BTF, for a sample
// of every such name the file has, half of them with -E.
func TestPaholeParityTypedefsEnums(t *testing.T) {
	files := []string{testutil.DebugFile(testutil.RealBinary(t, "libc"))}
	if _, err := os.Stat(loader.KernelBTF); err == nil {
		files = append(files, loader.KernelBTF)
	}
	for _, file := range files {
		spec, _, err := loader.Types(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		seen := map[string]bool{}
		for _, ty := range spec.Types() {
			name := ""
			switch v := ty.(type) {
			case *types.Typedef:
				if st, ok := types.Resolve(v).(*types.Struct); ok && st.Name == "" {
					continue // printed as its struct, as before
				}
				name = v.Name
			case *types.Enum:
				name = v.Name
			}
			if name != "" && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
		if len(names) < 200 {
			t.Fatalf("%s: %d typedefs and enums, want 200", file, len(names))
		}
		n, step := 0, len(names)/40
		for i := 0; i < len(names); i += step {
			ts, _ := spec.Find(names[i])
			if len(ts) != 1 {
				continue // pahole takes the first of several; so may gopahole, but not by the same rule
			}
			// every other name with -E, which expands no typedef at
			// the top (typedef __pid_t pid_t; either way)
			args := []string{"-C", names[i], file}
			if (i/step)%2 == 1 {
				args = append([]string{"-E"}, args...)
			}
			want := paholeOut(t, args...)
			code, got, errs := run(args...)
			if head, _, ok := strings.Cut(want, " __attribute__ ((__vector_size__"); ok {
				// The model has no vector types (DW_AT_GNU_vector): the
				// typedef is printed as the array it is laid out as.
				if code != 0 || !strings.HasPrefix(got, head+"[") {
					t.Errorf("%s: -C %s: exit %d %s\ngopahole:\n%s\npahole:\n%s", file, names[i], code, errs, got, want)
				}
				n++
				continue
			}
			if code != 0 || got != want {
				t.Errorf("%s: -C %s: exit %d %s\ngopahole:\n%s\npahole:\n%s", file, names[i], code, errs, got, want)
			}
			n++
		}
		if n < 20 {
			t.Errorf("%s: %d lookups compared, want 20", file, n)
		}
	}
}

// TestHeaderTypedefsEnums: --format=c -C of typedefs and an enum (FILE,
// pid_t, __codecvt_result on glibc) writes a header that clang -target bpf
// compiles, with its layout asserts, and in which FILE is the whole struct
// _IO_FILE: a program reads a member through it.
func TestHeaderTypedefsEnums(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	debug := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	code, header, errs := run("--format=c", "-C", "FILE,pid_t,__codecvt_result", debug)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	src := header + `
int use(FILE *f, pid_t p) {
	enum __codecvt_result r = __codecvt_noconv;
	return f->_flags + p + (int)r;
}
`
	c := filepath.Join(dir, "use.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-target", "bpf", "-O2", "-c", c, "-o", filepath.Join(dir, "use.o")).CombinedOutput(); err != nil {
		t.Fatalf("clang -target bpf: %v\n%s", err, out)
	}
	if n := strings.Count(header, "_Static_assert"); n < 20 {
		t.Errorf("%d layout asserts in the header, want at least 20 (struct _IO_FILE's members)", n)
	}
}

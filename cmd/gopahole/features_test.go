package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// featuresSrc has what the features decide: floating-point members, an
// enum of 8 bytes, global variables, and a static function two compile
// units define with different prototypes (featuresOther).
const featuresSrc = `struct sample { int a; float b; double c; };
enum wide { W_LOW = 1, W_HIGH = 0x100000000ULL };
struct sample g_sample;
enum wide g_wide;
int g_count = 3;
__attribute__((noinline)) static int twice(int x) { return 2 * x + g_count; }
int other(long);
int main(void) { return twice(g_sample.a) + other(g_sample.c) + (int)g_wide; }
`

const featuresOther = `__attribute__((noinline)) static int twice(long x, long y) { return (int)(x * y); }
int other(long v) { return twice(v, v + 1); }
`

// buildFeatures compiles featuresSrc and featuresOther into dir/prog.
func buildFeatures(t *testing.T, dir string) string {
	t.Helper()
	main, other, bin := filepath.Join(dir, "main.c"), filepath.Join(dir, "other.c"), filepath.Join(dir, "prog")
	for p, src := range map[string]string{main: featuresSrc, other: featuresOther} {
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tool(t, "gcc", "-g", "-O2", "-o", bin, main, other)
	return bin
}

// TestBTFFeatures: --btf_features picks what is encoded, as pahole's
// manual says: bpftool, reading each file, finds FLOAT, ENUM64, VARs and
// the inconsistent static function exactly where the features ask for
// them, and the kernel loads every variant.
func TestBTFFeatures(t *testing.T) {
	dir := t.TempDir()
	bin := buildFeatures(t, dir)
	type want struct{ float, enum64, vars, twice bool }
	for _, tc := range []struct {
		flags []string
		want  want
	}{
		{nil, want{float: true, enum64: true, vars: true}},
		{[]string{"--btf_features=default"}, want{float: true, enum64: true}},
		{[]string{"--btf_features=+global_var"}, want{float: true, enum64: true, vars: true}},
		{[]string{"--btf_features=enum64,global_var"}, want{enum64: true, vars: true, twice: true}},
		{[]string{"--btf_features=float,nonexistent"}, want{float: true, twice: true}},
		{[]string{"--btf_features_strict=consistent_func"}, want{}},
		{[]string{"--skip_encoding_btf_vars", "--skip_encoding_btf_enum64"}, want{float: true}},
		{[]string{"--btf_gen_all"}, want{float: true, enum64: true, vars: true}},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "prog.btf")
			if code, _, errs := run(append(tc.flags, "--btf_encode_detached", out, bin)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			dump := tool(t, "bpftool", "btf", "dump", "file", out)
			got := want{
				float:  strings.Contains(dump, "] FLOAT 'double' size=8"),
				enum64: strings.Contains(dump, "] ENUM64 'wide' "),
				vars:   strings.Contains(dump, "] VAR 'g_count' ") && strings.Contains(dump, "] VAR 'g_sample' "),
				twice:  regexp.MustCompile(`(?m)] FUNC 'twice' `).MatchString(dump),
			}
			if got != tc.want {
				t.Errorf("encoded %+v, want %+v:\n%s", got, tc.want, dump)
			}
			if !got.float && !strings.Contains(dump, "] INT 'double' size=8") {
				t.Errorf("without float, double is not an INT of 8 bytes:\n%s", dump)
			}
			if !got.enum64 && !regexp.MustCompile(`] ENUM 'wide' encoding=UNSIGNED size=8 vlen=2\n\t'W_LOW' val=1\n\t'W_HIGH' val=0\n`).MatchString(dump) {
				t.Errorf("without enum64, the 8-byte enum is not an ENUM of 8 bytes with its values' low 32 bits:\n%s", dump)
			}
			if !regexp.MustCompile(`(?m)] FUNC 'main' `).MatchString(dump) {
				t.Errorf("no FUNC main:\n%s", dump)
			}
			loadKernel(t, out)
		})
	}
	code, _, errs := run("--btf_features_strict=float,nonexistent", "--btf_encode_detached", filepath.Join(dir, "x.btf"), bin)
	if code == 0 || !strings.Contains(errs, `"nonexistent"`) || strings.Count(errs, "\n") != 1 {
		t.Errorf("--btf_features_strict with an unknown feature: exit %d, %q", code, errs)
	}
	if _, out, _ := run("--supported_btf_features"); !strings.Contains(out, "enum64,") || !strings.Contains(out, "true_signature") {
		t.Errorf("--supported_btf_features: %q", out)
	}
}

// TestEncodeJobs: the BTF of python3.11d (whose compile units define two
// different struct PyModuleDef) is the same bytes read with one thread,
// two or one per CPU (-j alone), as pahole's reproducible_build asks.
func TestEncodeJobs(t *testing.T) {
	bin := testutil.RealBinary(t, "python3.11d")
	dir := t.TempDir()
	var first []byte
	for _, j := range []string{"-j1", "-j2", "-j"} {
		out := filepath.Join(dir, "py"+j+".btf")
		if code, _, errs := run(j, "--btf_features=all", "--btf_encode_detached", out, bin); code != 0 {
			t.Fatalf("%s: exit %d: %s", j, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
			if n := strings.Count(tool(t, "bpftool", "btf", "dump", "file", out), "] STRUCT '"); n < 500 {
				t.Fatalf("bpftool reads only %d structs", n)
			}
			continue
		}
		if string(b) != string(first) {
			t.Errorf("%s writes other bytes than -j1 (%d and %d bytes)", j, len(b), len(first))
		}
	}
}

// trueSrc is pahole's gcc_true_signatures case: GCC -O2 makes foo a
// clone, foo.constprop.0, that takes a and d (in RDI and RSI) and has b as
// the constant 1.
const trueSrc = `struct t { int a; };
__attribute__((noinline)) char *tar(struct t *a, struct t *d)
{
	if (a->a == d->a)
		return (char *)10;
	return (char *)0;
}
__attribute__((noinline)) static char *foo(struct t *a, int b, struct t *d) { return tar(a, d); }
__attribute__((noinline)) char *bar(struct t *a, struct t *d) { return foo(a, 1, d); }
struct t p1, p2;
int main(void) { return !!bar(&p1, &p2); }
`

// TestTrueSignatures: a function GCC kept only as a clone that takes other
// parameters than the source declares is left out by default, with the
// line pahole -V prints, and with true_signature is encoded under the
// clone's symbol with the parameters the clone's own DWARF entry locates
// in RDI and RSI (readelf shows the third as a constant); the kernel
// loads it.
func TestTrueSignatures(t *testing.T) {
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "true.c"), filepath.Join(dir, "true")
	if err := os.WriteFile(src, []byte(trueSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	tool(t, "gcc", "-g", "-O2", "-o", bin, src)
	if !strings.Contains(tool(t, "nm", bin), " t foo.constprop.0\n") {
		testutil.Skipf(t, "gcc made no foo.constprop.0 here")
	}
	info := tool(t, "readelf", "--debug-dump=info", bin)
	if !regexp.MustCompile(`DW_AT_abstract_origin: <0x[0-9a-f]+>\n\s+<[0-9a-f]+>\s+DW_AT_const_value : 1\n`).MatchString(info) {
		t.Fatalf("readelf shows no parameter of the clone as the constant 1:\n%s", info)
	}
	out := filepath.Join(dir, "default.btf")
	code, stdout, errs := run("-V", "--btf_features=default", "--btf_encode_detached", out, bin)
	if code != 0 || !strings.Contains(stdout, "foo : skipping BTF encoding of function due to optimized parameters\n") {
		t.Fatalf("default: exit %d, %q %s", code, stdout, errs)
	}
	dump := tool(t, "bpftool", "btf", "dump", "file", out)
	if strings.Contains(dump, "FUNC 'foo") || !strings.Contains(dump, "FUNC 'bar' ") {
		t.Errorf("default: foo encoded or bar missing:\n%s", dump)
	}
	out = filepath.Join(dir, "true.btf")
	if code, _, errs := run("--btf_features=+true_signature", "--btf_encode_detached", out, bin); code != 0 {
		t.Fatalf("true_signature: exit %d: %s", code, errs)
	}
	dump = tool(t, "bpftool", "btf", "dump", "file", out)
	m := regexp.MustCompile(`FUNC 'foo\.constprop\.0' type_id=(\d+) linkage=static`).FindStringSubmatch(dump)
	if m == nil {
		t.Fatalf("no FUNC foo.constprop.0:\n%s", dump)
	}
	proto := regexp.MustCompile(`(?m)^\[` + m[1] + `\] FUNC_PROTO '\(anon\)' ret_type_id=\d+ vlen=(\d+)\n((?:\t.*\n)*)`).FindStringSubmatch(dump)
	if proto == nil || proto[1] != "2" || !regexp.MustCompile(`^\t'a' type_id=\d+\n\t'd' type_id=\d+\n$`).MatchString(proto[2]) {
		t.Errorf("foo.constprop.0 does not take (a, d): %q\n%s", proto, dump)
	}
	loadKernel(t, out)
}

// TestEncodeVerbose: -V lists each type encoded as pahole -V does, and
// every line's ID, kind and name are what bpftool reads at that ID (an
// 8-byte enum without enum64 an ENUM).
func TestEncodeVerbose(t *testing.T) {
	dir := t.TempDir()
	bin, out := buildFeatures(t, dir), filepath.Join(dir, "prog.btf")
	code, log, errs := run("-V", "--btf_features=float,global_var", "--btf_encode_detached", out, bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	head := regexp.MustCompile(`(?m)^\[(\d+)\] ([A-Z_0-9]+) ('[^']*'|\S*)`)
	bpftool := map[string]string{}
	for _, m := range head.FindAllStringSubmatch(tool(t, "bpftool", "btf", "dump", "file", out), -1) {
		name := strings.Trim(m[3], "'")
		if name == "(anon)" {
			name = ""
		}
		bpftool[m[1]] = m[2] + " " + name
	}
	lines := regexp.MustCompile(`(?m)^\[(\d+)\] ([A-Z_0-9]+)(.*)`).FindAllStringSubmatch(log, -1)
	if len(lines) != len(bpftool) || len(lines) < 15 {
		t.Fatalf("-V lists %d types, bpftool %d:\n%s", len(lines), len(bpftool), log)
	}
	for _, m := range lines {
		name := m[3] // up to the first attribute
		for _, attr := range []string{" size=", " type_id=", " return="} {
			name, _, _ = strings.Cut(name, attr)
		}
		got := m[2] + " " + strings.TrimSpace(name)
		if got != bpftool[m[1]] {
			t.Errorf("[%s]: -V says %q, bpftool %q", m[1], got, bpftool[m[1]])
		}
	}
}

// TestTrueSignaturesClang: clang -O2 changes how a static function is
// called under its own name (no clone suffix): it drops parameters the
// body does not use, moves the others up, passes a struct by its first
// member alone. llvm-dwarfdump shows where each parameter is at entry;
// by default such a function is left out (-V says so, as pahole does),
// and with true_signature it is encoded with the parameters it takes, in
// the registers' order, a struct's member as PARAM__MEMBER, one passed
// on the stack kept. The kernel loads both.
func TestTrueSignaturesClang(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		dwarf     []string // where llvm-dwarfdump says parameters are
		want      string   // the parameters of FUNC foo with true_signature
	}{
		{"dropped", "__attribute__((noinline)) static int foo(int a, int b, int c) { return a * c - a - c; }\nint a, b, c;\nint main(void) { return foo(a, b, c); }\n",
			[]string{`DW_OP_reg5 RDI\)\n[^\n]*DW_AT_name\t\("a"\)`, `DW_OP_reg4 RSI\n(?:[^\n]*\n){1,2}\s+DW_AT_name\t\("c"\)`}, "a c"},
		{"member", "struct t { long f1; long f2; };\n__attribute__((noinline)) static long foo(struct t a, struct t b, int i) { return a.f1 + b.f1 + b.f2 + i; }\nstruct t p1, p2;\nint i;\nint main(void) { return (int)foo(p1, p2, i); }\n",
			[]string{`DW_OP_reg5 RDI, DW_OP_piece 0x8\)\n[^\n]*DW_AT_name\t\("a"\)`, `DW_OP_reg2 RCX\)\n[^\n]*DW_AT_name\t\("i"\)`}, "a__f1 b i"},
		{"memory", "union big { long a; char buf[24]; };\n__attribute__((noinline)) static long foo(union big u, int dead, int x) { return u.a + x; }\nunion big g;\nint dead, x;\nint main(void) { return (int)foo(g, dead, x); }\n",
			[]string{`DW_OP_fbreg \+8\)\n[^\n]*DW_AT_name\t\("u"\)`, `DW_OP_reg5 RDI\)\n[^\n]*DW_AT_name\t\("x"\)`}, "u x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src, bin := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
			if err := os.WriteFile(src, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			tool(t, "clang", "-g", "-O2", "-o", bin, src)
			info := tool(t, "llvm-dwarfdump", "--debug-info", bin)
			for _, re := range tc.dwarf {
				if !regexp.MustCompile(re).MatchString(info) {
					t.Fatalf("llvm-dwarfdump does not show %s:\n%s", re, info)
				}
			}
			out := filepath.Join(dir, "default.btf")
			code, stdout, errs := run("-V", "--btf_features=default", "--btf_encode_detached", out, bin)
			if code != 0 || !strings.Contains(stdout, "foo : skipping BTF encoding of function due to optimized parameters\n") {
				t.Fatalf("default: exit %d, %q %s", code, stdout, errs)
			}
			if dump := tool(t, "bpftool", "btf", "dump", "file", out); strings.Contains(dump, "FUNC 'foo'") || !strings.Contains(dump, "FUNC 'main'") {
				t.Errorf("default: foo encoded or main missing:\n%s", dump)
			}
			loadKernel(t, out)
			out = filepath.Join(dir, "true.btf")
			if code, _, errs := run("--btf_features=+true_signature", "--btf_encode_detached", out, bin); code != 0 {
				t.Fatalf("true_signature: exit %d: %s", code, errs)
			}
			dump := tool(t, "bpftool", "btf", "dump", "file", out)
			m := regexp.MustCompile(`FUNC 'foo' type_id=(\d+) linkage=static`).FindStringSubmatch(dump)
			if m == nil {
				t.Fatalf("no FUNC foo:\n%s", dump)
			}
			proto := regexp.MustCompile(`(?m)^\[` + m[1] + `\] FUNC_PROTO '\(anon\)' ret_type_id=\d+ vlen=\d+\n((?:\t.*\n)*)`).FindStringSubmatch(dump)
			var got []string
			for _, p := range regexp.MustCompile(`\t'(\w+)' type_id=`).FindAllStringSubmatch(proto[1], -1) {
				got = append(got, p[1])
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("foo takes %v, want %s:\n%s", got, tc.want, dump)
			}
			loadKernel(t, out)
		})
	}
}

// TestAttributesFeature: --btf_features_strict takes pahole's
// "attributes" (tags with kind_flag 1, written for the kernel's kfuncs
// only) and, with nothing in DWARF that carries such attributes, writes
// the same bytes as without it.
func TestAttributesFeature(t *testing.T) {
	dir := t.TempDir()
	bin := buildFeatures(t, dir)
	var raw [2][]byte
	for i, list := range []string{"global_var,float", "global_var,float,attributes"} {
		out := filepath.Join(dir, "a.btf")
		if code, _, errs := run("--btf_features_strict="+list, "--btf_encode_detached", out, bin); code != 0 {
			t.Fatalf("%s: exit %d %s", list, code, errs)
		}
		var err error
		if raw[i], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
	}
	if string(raw[0]) != string(raw[1]) || len(raw[0]) < 100 {
		t.Errorf("attributes changed the BTF (%d bytes, %d with it)", len(raw[0]), len(raw[1]))
	}
	if _, out, _ := run("--supported_btf_features"); !strings.Contains(out, ",attributes") {
		t.Errorf("--supported_btf_features: %q", out)
	}
}

// TestOptimizedFunc: a function GCC kept only as a clone whose
// parameters are the source's (foo.isra.0: IPA-SRA dropped the unused
// result, nm shows the clone and no foo, llvm-dwarfdump the clone's a
// and b in RDI and RSI) is encoded under its own name with them when
// optimized_func is on (pahole's default set), and left out, with -V's
// line, without it. The kernel loads both.
func TestOptimizedFunc(t *testing.T) {
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "of.c"), filepath.Join(dir, "of")
	code := "int g;\n__attribute__((noinline)) static int foo(int a, int b) { g = a * b + a; return a - b; }\nint x, y;\nint main(void) { foo(x, y); foo(y, x); return g; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	tool(t, "gcc", "-g", "-O2", "-o", bin, src)
	if syms := tool(t, "nm", bin); !strings.Contains(syms, " t foo.isra.0\n") || strings.Contains(syms, " t foo\n") {
		testutil.Skipf(t, "gcc made no foo.isra.0 alone here:\n%s", syms)
	}
	info := tool(t, "llvm-dwarfdump", "--debug-info", bin)
	for _, re := range []string{`DW_AT_abstract_origin\t\(0x[0-9a-f]+ "a"\)\n\s+DW_AT_location\t\((?:[^\n]*\n\s+\[[^\n]*\): )?DW_OP_reg5 RDI`,
		`DW_AT_abstract_origin\t\(0x[0-9a-f]+ "b"\)\n\s+DW_AT_location\t\((?:[^\n]*\n\s+\[[^\n]*\): )?DW_OP_reg4 RSI`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Fatalf("llvm-dwarfdump does not show %s:\n%s", re, info)
		}
	}
	for _, tc := range []struct {
		features string
		encoded  bool
	}{{"default", true}, {"encode_force,var,float,decl_tag,type_tag,enum64,consistent_func", false}} {
		out := filepath.Join(dir, "of.btf")
		code, stdout, errs := run("-V", "--btf_features="+tc.features, "--btf_encode_detached", out, bin)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", tc.features, code, errs)
		}
		dump := tool(t, "bpftool", "btf", "dump", "file", out)
		m := regexp.MustCompile(`FUNC 'foo' type_id=(\d+) linkage=static`).FindStringSubmatch(dump)
		skipped := strings.Contains(stdout, "foo : skipping BTF encoding of function due to optimized parameters\n")
		switch {
		case tc.encoded && (m == nil || skipped):
			t.Errorf("%s: foo not encoded (-V %q):\n%s", tc.features, stdout, dump)
		case tc.encoded && !regexp.MustCompile(`(?m)^\[`+m[1]+`\] FUNC_PROTO '\(anon\)' ret_type_id=\d+ vlen=2\n\t'a' type_id=\d+\n\t'b' type_id=`).MatchString(dump):
			t.Errorf("%s: foo does not take (a, b):\n%s", tc.features, dump)
		case !tc.encoded && (m != nil || !skipped):
			t.Errorf("%s: foo encoded, or -V silent (%q):\n%s", tc.features, stdout, dump)
		}
		loadKernel(t, out)
	}
}

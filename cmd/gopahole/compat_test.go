package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// optionsSrc has the shapes pahole's own tests give its options: holes,
// a packed struct, a flexible array, a multi-dimensional array, an
// aligned member, silly bitfields, pointers to structs (one to itself),
// an enum and functions taking pointers.
const optionsSrc = `struct holey { int a; char b; int c; char d; };
struct __attribute__((packed)) packed_s { int x; char y; int z; };
struct flex { int count; char data[]; };
struct small { char a; };
struct with_array { int matrix[3][4]; char name[16]; };
struct aligned_member { int x __attribute__((aligned(16))); int y; };
struct silly { unsigned char val : 8; int w : 32; };
struct leaf { int value; char tag; };
struct middle { struct leaf *leaf; int count; };
struct top { struct middle *mid; int flags; };
struct self_ref { struct self_ref *next; int data; };
enum color { RED, GREEN, BLUE };
int use(struct holey *h, struct small *s, struct top *t) { return h->a + s->a + t->flags; }
int use2(struct holey *h) { return h->a; }
struct holey g1; struct packed_s g2; struct flex g3; struct small g4; struct with_array g5;
struct aligned_member g6; struct silly g7; struct top g8; struct self_ref g9; enum color g10;
`

// otherSrc defines one type of optionsSrc's again, one of the same name
// and another size, and one of its own.
const otherSrc = `struct small { char a; };
struct holey { int a; char b; int c; };
struct alpha { long x; };
int f(struct alpha *a, struct small *s) { return a->x + s->a; }
struct small h1; struct holey h2; struct alpha h3;
`

// compileObj compiles C source src with gcc -g -c into dir/name.o.
func compileObj(t *testing.T, dir, name, src string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	c, o := filepath.Join(dir, name+".c"), filepath.Join(dir, name+".o")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-c", "-o", o, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, out)
	}
	return o
}

// samePahole requires gopahole's output with args to be pahole 1.24's.
func samePahole(t *testing.T, args ...string) {
	t.Helper()
	want := paholeOut(t, args...)
	code, got, errs := run(args...)
	if code != 0 || got != want {
		t.Errorf("%v: exit %d %s\ngopahole:\n%s\npahole:\n%s", args, code, errs, got, want)
	}
}

// TestPaholeOptions: pahole's options that its regression tests use
// print what pahole 1.24 prints, byte for byte: filters (--packed,
// --with_flexible_array, -x, -X, -D, -C file://), rows (-n, -N, -s -t,
// --nr_definitions, --nr_methods, -u, -z, -y), printer switches (-q, -M, -p,
// --flat_arrays, the --suppress_ ones, -S), several files and --version.
func TestPaholeOptions(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "options", optionsSrc)
	other := compileObj(t, dir, "other", otherSrc)
	list := filepath.Join(dir, "list")
	if err := os.WriteFile(list, []byte("small\ntop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-q", "-C", "holey"}, {"--packed"}, {"--with_flexible_array"}, {"-n"}, {"-N"}, {"-s", "-t", "|"},
		{"--nr_definitions"}, {"-u", "-C", "holey"}, {"--nr_methods"}, {"--flat_arrays", "-C", "with_array"},
		{"--suppress_aligned_attribute", "-C", "aligned_member"}, {"--suppress_packed", "-C", "packed_s"},
		{"--suppress_force_paddings", "-C", "holey"}, {"-M", "-C", "holey"}, {"-x", "s"}, {"-D", dir},
		{"-p", "-C", "top"}, {"-E", "-p", "-C", "top"}, {"-p", "-C", "self_ref"}, {"-p"},
		{"-X", "/nonexistent", "-C", "holey"}, {"-C", "file://" + list}, {"-a", "--sizes"}, {"-A", "-s"},
		{"-S", "-C", "holey"}, {"--sort"}, {"--version"}, {"--numeric_version"},
		{"-z", "1"}, {"-z", "3"}, {"-z", "4"}, {"--hole_size_ge=8"}, {"-z", "3", "-s"}, {"-y", "hol"}, {"--prefix_filter=s"},
	} {
		samePahole(t, append(args, obj)...)
	}
	for _, args := range [][]string{
		{"-s", obj, other}, {obj, other}, {"-C", "alpha", obj, other}, {"--first_obj_only", "-s", obj, other},
		{"-s", "--nr_methods", obj, other},
	} {
		samePahole(t, args...)
	}
	// One object of two compile units: --first_obj_only reads the first.
	both := filepath.Join(dir, "both.o")
	if out, err := exec.Command("ld", "-r", "-o", both, obj, other).CombinedOutput(); err != nil {
		t.Fatalf("ld -r: %v\n%s", err, out)
	}
	samePahole(t, "-s", both)
	samePahole(t, "--first_obj_only", "-s", both)
	// A directory reads as the files in it.
	if err := os.Remove(both); err != nil {
		t.Fatal(err)
	}
	if code, got, errs := run("-s", dir); code != 0 || got != paholeOut(t, "-s", obj, other) {
		t.Errorf("-s DIR: exit %d %s\n%s", code, errs, got)
	}
}

// TestFixupSillyBitfields: a bitfield as wide as its type prints as the
// plain member the compiler lays out the same way: what pahole prints
// for the struct written with plain members. (pahole 1.24 leaves them:
// its test calls that a known bug.)
func TestFixupSillyBitfields(t *testing.T) {
	dir := t.TempDir()
	silly := compileObj(t, dir, "silly", "struct silly { unsigned char val : 8; int w : 32; }; struct silly g;\n")
	plain := compileObj(t, dir, "plain", "struct silly { unsigned char val; int w; }; struct silly g;\n")
	want := paholeOut(t, "-C", "silly", plain)
	code, got, errs := run("--fixup_silly_bitfields", "-C", "silly", silly)
	if code != 0 || got != want {
		t.Errorf("exit %d %s\ngopahole:\n%s\npahole on plain members:\n%s", code, errs, got, want)
	}
	if _, unfixed, _ := run("-C", "silly", silly); !strings.Contains(unfixed, "val:8;") {
		t.Errorf("without the option the bitfield should stay:\n%s", unfixed)
	}
}

// TestContainsEnumerator: --contains_enumerator prints the enums that
// have the enumerator as pahole -C prints each (pahole 1.24 has no such
// option), nothing for one no enum has.
func TestContainsEnumerator(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "enums", "enum color { RED, GREEN, BLUE }; enum flavor { SWEET = 10, BITTER = 30 };\nenum color c; enum flavor f;\n")
	for enum, value := range map[string]string{"color": "GREEN", "flavor": "BITTER"} {
		want := paholeOut(t, "-C", enum, obj)
		code, got, errs := run("--contains_enumerator", value, obj)
		if code != 0 || got != want {
			t.Errorf("%s: exit %d %s\ngopahole:\n%s\npahole -C %s:\n%s", value, code, errs, got, enum, want)
		}
	}
	if code, got, _ := run("--contains_enumerator", "NONEXISTENT", obj); code != 0 || got != "" {
		t.Errorf("NONEXISTENT: exit %d, printed %q", code, got)
	}
}

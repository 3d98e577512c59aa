package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
)

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		testutil.Skipf(t, "%s not installed (scripts/install-deps.sh installs it): %v", name, err)
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func btfLines(s string) []string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(l)
	return l
}

// TestFuncsFromBTF: gofunct -F btf lists the functions of BTF that pahole
// 1.24 encoded (-J) as pfunct 1.24 -F btf lists them, names and -P
// prototypes, line for line; --all is -P; -f and -E pick as they do on
// DWARF.
func TestFuncsFromBTF(t *testing.T) {
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "shapes.c"), filepath.Join(dir, "shapes")
	if err := os.WriteFile(src, []byte(protoShapes), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "gcc", "-g", "-O0", "-o", bin, src)
	mustRun(t, "pahole", "-J", bin)
	for _, flags := range [][]string{{}, {"-P"}} {
		want := btfLines(mustRun(t, "pfunct", append(flags, "-F", "btf", bin)...))
		code, out, errs := runGofunct(append(flags, "-F", "btf", bin)...)
		got := btfLines(out)
		if code != 0 || !slices.Equal(got, want) || len(want) < 10 {
			t.Errorf("gofunct %v -F btf: exit %d %s\n%s\npfunct:\n%s", flags, code, errs, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	_, all, _ := runGofunct("--all", "-F", "btf", bin)
	_, protos, _ := runGofunct("-P", "--format_path=btf", bin)
	if all != protos {
		t.Errorf("--all differs from -P:\n%s\n%s", all, protos)
	}
	if _, out, _ := runGofunct("-P", "-F", "btf", "-f", "bar", bin); out != "int bar(int a, int b);\n" {
		t.Errorf("-f bar: %q", out)
	}
	code, _, errs := runGofunct("-F", "btf", "--locations", bin)
	if code == 0 || strings.Count(errs, "\n") != 1 {
		t.Errorf("--locations -F btf: exit %d, %q", code, errs)
	}
}

// TestDeclTagsFromBTF: gofunct -P -F btf prints the decl tags clang's BPF
// target wrote (bpftool btf dump lists them) as pfunct prints those it
// reads from BTF: a function's before its prototype, a parameter's
// before its type. clang 14 writes no parameter's tags (bpftool shows
// none), so those come from the BTF gopahole -J encodes of the same
// source, whose DECL_TAGs bpftool lists too.
func TestDeclTagsFromBTF(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tags.c")
	code := `#define __tag(x) __attribute__((btf_decl_tag(#x)))
__tag(a) __tag(b) __tag(c) void foo(void) {}
__tag(a) __tag(b)          void bar(void) {}
__tag(a)                   void buz(void) {}
void qux(int __tag(param_a) arg, long __tag(param_b) __tag(x) other) {}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bpf := filepath.Join(dir, "tags.bpf.o")
	mustRun(t, "clang", "-target", "bpf", "-g", "-c", "-o", bpf, src)
	obj := filepath.Join(dir, "tags.o")
	mustRun(t, "clang", "-g", "-c", "-o", obj, src)
	ours := filepath.Join(dir, "tags.btf")
	encodeBTF(t, obj, ours)
	checked := 0
	for _, f := range []string{bpf, ours} {
		want := bpftoolTags(t, mustRun(t, "bpftool", "btf", "dump", "file", f))
		c, out, errs := runGofunct("-P", "-F", "btf", f)
		if c != 0 {
			t.Fatalf("%s: exit %d %s", f, c, errs)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			m := regexp.MustCompile(`^(.*?)void (\w+)\((.*)\);$`).FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: line %q", f, l)
			}
			fnTags := strings.Fields(m[1])
			sort.Strings(fnTags)
			if got, w := strings.Join(fnTags, " "), want[m[2]+"/-1"]; got != w {
				t.Errorf("%s: %s: tags %q, bpftool %q", f, m[2], got, w)
			}
			checked++
			for i, p := range strings.Split(m[3], ", ") {
				words := strings.Fields(p)
				if p == "void" {
					continue
				}
				// The tags are the words before the type (int, long).
				k := slices.IndexFunc(words, func(w string) bool { return w == "int" || w == "long" })
				if k < 0 {
					t.Fatalf("%s: parameter %q of %s has no type", f, p, m[2])
				}
				tags := words[:k]
				sort.Strings(tags)
				if got, w := strings.Join(tags, " "), want[m[2]+"/"+string(rune('0'+i))]; got != w {
					t.Errorf("%s: %s parameter %d: tags %q, bpftool %q", f, m[2], i, got, w)
				}
				checked++
			}
		}
	}
	if checked < 12 {
		t.Errorf("%d functions and parameters checked, want 12", checked)
	}
}

// bpftoolTags are the decl tags bpftool btf dump lists for each FUNC, by
// "NAME/COMPONENT" (-1 for the function), sorted and space-separated.
func bpftoolTags(t *testing.T, dump string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\[(\d+)\] FUNC '(\w+)'`).FindAllStringSubmatch(dump, -1) {
		names[m[1]] = m[2]
	}
	tags := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\[\d+\] DECL_TAG '(\w+)' type_id=(\d+) component_idx=(-?\d+)`).FindAllStringSubmatch(dump, -1) {
		if n, ok := names[m[2]]; ok {
			tags[n+"/"+m[3]] = append(tags[n+"/"+m[3]], m[1])
		}
	}
	out := map[string]string{}
	for k, v := range tags {
		sort.Strings(v)
		out[k] = strings.Join(v, " ")
	}
	if len(out) < 3 {
		t.Fatalf("bpftool lists decl tags of %d functions:\n%s", len(out), dump)
	}
	return out
}

// encodeBTF writes the BTF of in's DWARF, types and functions, to out, as
// gopahole --btf_encode_detached does.
func encodeBTF(t *testing.T, in, out string) {
	t.Helper()
	spec, _, err := loader.Types(in, &loader.TypesOptions{Format: "dwarf"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := loader.OpenCode(in, &loader.CodeOptions{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := btf.Encode(spec, &btf.EncodeOptions{Funcs: c.Funcs(), Relocatable: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

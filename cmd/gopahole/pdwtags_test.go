package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// pdwtagsSrc has what dwarves' pdwtags test looks for: a typedef, a
// self-referencing struct, an enum and a function.
const pdwtagsSrc = `typedef unsigned long size_t_alias;
struct node { int key; char *value; struct node *next; };
union both { int i; float f; };
enum state { INIT = 0, RUNNING = 1, DONE = 2 };
int lookup(struct node *head, int key) { while (head) { if (head->key == key) return 1; head = head->next; } return 0; }
static int helper(union both *b) { return b->i; }
int use(union both *b) { return helper(b); }
struct node g1; enum state g2; size_t_alias g3; union both g4;
`

// namespaceSrc nests a struct in two namespaces and one in the outer.
const namespaceSrc = `namespace outer {
    namespace inner { struct Nested { int x; int y; }; }
    struct InOuter { int a; inner::Nested n; };
    struct Holder { struct Member { int m; } member; };
}
outer::InOuter g_outer;
outer::inner::Nested g_nested;
outer::Holder g_holder;
int main() { return g_nested.x; }
`

var pdwtagsHead = regexp.MustCompile(`(?m)^(struct|union|enum) (\w+) \{$`)

// TestPdwtags: gopahole run as pdwtags prints every struct, union, enum,
// typedef and function Debian's pdwtags 1.24 prints; and each C++ type
// inside the namespaces that name it, as gdb resolves the qualified name
// (outer::inner::Nested).
func TestPdwtags(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "pdwtags", pdwtagsSrc)
	want := tool(t, "pdwtags", obj)
	var out, errs bytes.Buffer
	if code := pdwtags([]string{obj}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	got := out.String()
	heads := pdwtagsHead.FindAllString(want, -1)
	_, funcs, _ := strings.Cut(want, "/* Functions: */")
	names := regexp.MustCompile(`(?m)^[^/\n][^(\n]*?(\w+)\(`).FindAllStringSubmatch(strings.Split(funcs, "/* Variables: */")[0], -1)
	if len(heads) != 3 || len(names) != 3 {
		t.Fatalf("Debian's pdwtags printed %d types and %d functions:\n%s", len(heads), len(names), want)
	}
	for _, h := range heads {
		if !strings.Contains(got, h+"\n") {
			t.Errorf("%q missing:\n%s", h, got)
		}
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^.*\b` + n[1] + `\(.*\);$`).MatchString(got) {
			t.Errorf("function %s missing:\n%s", n[1], got)
		}
	}
	if !strings.Contains(got, "typedef long unsigned int size_t_alias;") {
		t.Errorf("typedef missing:\n%s", got)
	}

	src := filepath.Join(dir, "ns.cpp")
	cppObj := filepath.Join(dir, "ns.o")
	if err := os.WriteFile(src, []byte(namespaceSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("g++", "-g", "-o", cppObj, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out.Reset()
	if code := pdwtags([]string{cppObj}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for path, want := range map[string]string{
		"outer::inner::Nested": "namespace outer {\nnamespace inner {\nstruct Nested {\n",
		"outer::InOuter":       "} /* namespace inner */\nstruct InOuter {\n",
		"outer::Holder":        "};\nstruct Holder {\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: no %q in:\n%s", path, want, out.String())
		}
		if _, err := exec.LookPath("gdb"); err != nil {
			testutil.Skipf(t, "gdb not installed: %v", err)
		}
		g, err := exec.Command("gdb", "-batch", "-ex", "ptype "+path, cppObj).CombinedOutput()
		if err != nil || !strings.Contains(string(g), "type = struct "+path+" {") {
			t.Errorf("gdb ptype %s: %v\n%s", path, err, g)
		}
	}
}

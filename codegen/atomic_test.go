package codegen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// atomicSrc has C11 _Atomic members of every shape the header keeps: base
// types, a typedef of an atomic type, an atomic pointer (the qualifier
// after the star) and a pointer to atomic.
const atomicSrc = `typedef _Atomic int atomic_int;
typedef _Atomic unsigned long long atomic_ullong;
struct chain_user { int v; };
struct atomic_test {
	_Atomic int counter;
	_Atomic long long sequence;
	int normal;
	_Atomic(struct chain_user *) user;
	atomic_int ai;
	atomic_ullong mask;
	const _Atomic int *cai;
	_Atomic short s;
};
struct atomic_test g;
`

// ptypeMembers runs gdb's ptype /o on struct name in bin and returns its
// member declarations by name, padding members left out.
func ptypeMembers(t *testing.T, bin, name string) map[string]string {
	t.Helper()
	out, err := exec.Command("gdb", "-batch", "-ex", "ptype /o struct "+name, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	decl := regexp.MustCompile(`\*/\s+(.*[^\w])(\w+);$`)
	members := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := decl.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !strings.HasPrefix(m[2], "__pad") {
			members[m[2]] = strings.TrimSpace(m[1])
		}
	}
	return members
}

// TestHeaderAtomic: the header keeps C11's _Atomic where it changes no
// layout, in the place C gives it: gdb reads the same member types from
// the header compiled again as from the original program.
func TestHeaderAtomic(t *testing.T) {
	for _, tool := range []string{"gcc", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			testutil.Skipf(t, "%s not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	compile := func(name, src string) string {
		c, o := filepath.Join(dir, name+".c"), filepath.Join(dir, name+".o")
		if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("gcc", "-std=c11", "-g", "-c", "-o", o, c).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", name, err, out)
		}
		return o
	}
	orig := compile("atomic", atomicSrc)
	spec, err := dwarf.Load(orig, nil)
	if err != nil {
		t.Fatal(err)
	}
	var roots []types.Type
	for _, ty := range spec.Lookup("atomic_test") {
		if s, ok := ty.(*types.Struct); ok {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("found %d struct atomic_test", len(roots))
	}
	var h bytes.Buffer
	if _, err := codegen.WriteHeader(&h, roots, &codegen.HeaderOptions{Source: "atomic"}); err != nil {
		t.Fatal(err)
	}
	again := compile("again", h.String()+"struct atomic_test g;\n")
	want, got := ptypeMembers(t, orig, "atomic_test"), ptypeMembers(t, again, "atomic_test")
	if len(want) != 8 {
		t.Fatalf("gdb read %d members of the original, want 8: %v", len(want), want)
	}
	atomics := 0
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: header's %q, original's %q", name, got[name], w)
		}
		if strings.Contains(w, "_Atomic") {
			atomics++
		}
	}
	if atomics < 5 {
		t.Errorf("gdb shows _Atomic in %d members, want at least 5: %v", atomics, want)
	}
	if t.Failed() {
		t.Log(h.String())
	}
	hdr := filepath.Join(dir, "atomic.h")
	if err := os.WriteFile(hdr, h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	compileBPF(t, dir, "#include \"atomic.h\"\n")
}

package goref

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestInternalPackages: functions of internal packages, which no other
// module may import, get from a reference build (placed in the tree that
// may import them) the signatures the compiler's own DWARF gives them in
// a build of the same program with DWARF: client_golang's
// prometheus/internal in go-prom (a module's internal package) and
// cmd/internal/objfile in cmd/addr2line (the toolchain's).
func TestInternalPackages(t *testing.T) {
	tmp := t.TempDir()
	build := func(out string, args ...string) string {
		path := filepath.Join(tmp, out)
		cmd := exec.Command("go", append(append([]string{"build", "-o", path}, args...), "cmd/addr2line")...)
		cmd.Env = append(cmd.Environ(), "GOTOOLCHAIN=local")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, b)
		}
		return path
	}
	cases := []struct {
		pkg, stripped, full string
		min                 int
	}{
		{"github.com/prometheus/client_golang/prometheus/internal",
			testutil.Fixture(t, "go-prom-stripped").Path, testutil.Fixture(t, "go-prom").Path, 5},
		{"cmd/internal/objfile", build("a2l-stripped", "-ldflags=-s -w", "-trimpath"), build("a2l"), 20},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.full), func(t *testing.T) {
			compareSignatures(t, c.pkg, c.stripped, c.full, c.min)
		})
	}
}

// compareSignatures attaches the reference's parameters to pkg's
// functions in stripped and compares them with full's DWARF.
func compareSignatures(t *testing.T, pkg, stripped, full string, min int) *Ref {
	m, err := code.Open(stripped, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var names []string
	for _, fn := range m.Funcs() {
		if PackageOf(fn.Name) == pkg && Keepable(fn.Name) {
			names = append(names, fn.Name)
		}
	}
	ref, err := Attach(m, names, &Options{CacheDir: t.TempDir()})
	if err != nil || ref == nil {
		t.Fatalf("no reference (%v)", err)
	}
	dm, err := code.Open(full, &code.Options{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dm.Close()
	compared := 0
	for _, n := range names {
		got := m.Lookup(n)
		var want *types.Func
		for _, c := range dm.Lookup(n) {
			if c.Name == n && !c.SymbolOnly {
				want = c
			}
		}
		if len(got) != 1 || want == nil {
			continue
		}
		if got[0].SymbolOnly {
			t.Errorf("%s: no parameters from the reference", n)
			continue
		}
		compared++
		if g, w := signature(got[0]), signature(want); g != w {
			t.Errorf("%s: reference %s, DWARF %s", n, g, w)
		}
	}
	if compared < min {
		t.Errorf("%s: only %d functions compared (want at least %d)", pkg, compared, min)
	}
	t.Logf("%s: %d functions agree (%s)", pkg, compared, ref.Note())
	return ref
}

// signature spells fn's arguments (results are left out: the compiler's
// DWARF omits unnamed results the optimised code never keeps).
func signature(fn *types.Func) string {
	s := ""
	for _, p := range fn.Params {
		if !p.Result {
			s += " " + p.Name + " " + types.TypeString(p.Type) + ";"
		}
	}
	return s
}

// TestOldToolchain: a binary built by go1.19.8 (the toolchain of
// Debian's prometheus; its linker knows no -checklinkname) gets its
// reference from go1.19.8, whose signatures of net/url and net/http equal
// the compiler's DWARF in a go1.19.8 build of the same program.
func TestOldToolchain(t *testing.T) {
	const v = "go1.19.8"
	if out, err := exec.Command("sh", "-c", "GOTOOLCHAIN="+v+" GOPROXY=off go version").CombinedOutput(); err != nil {
		testutil.Skipf(t, "%s is not in the module cache (scripts/install-deps.sh fetches it): %s", v, out)
	}
	dir := t.TempDir()
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n\t\"net/url\"\n)\n\nfunc main() {\n\tu, err := url.Parse(\"http://x/a?b=c\")\n\tfmt.Println(u.Query(), err, http.StatusText(200))\n}\n"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", src)
	write("go.mod", "module example.com/old\n\ngo 1.19\n")
	build := func(out string, args ...string) string {
		path := filepath.Join(dir, out)
		cmd := exec.Command("go", append(append([]string{"build", "-o", path}, args...), ".")...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOTOOLCHAIN="+v, "GOFLAGS=-mod=mod", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, b)
		}
		return path
	}
	stripped, full := build("old-stripped", "-ldflags=-s -w", "-trimpath"), build("old")
	if o, err := ReadOrigin(stripped); err != nil || o.GoVersion != v {
		t.Fatalf("%s: built by %v (%v), want %s", stripped, o, err, v)
	}
	if ref := compareSignatures(t, "net/url", stripped, full, 10); ref.Toolchain != v {
		t.Errorf("the reference was built with %s, want %s", ref.Toolchain, v)
	}
}

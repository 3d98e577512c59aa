package testutil

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// GoToolchains are the Go toolchains testdata/cgo-work is built with: the
// oldest whose tables the tools read (Go 1.16; the module registry serves
// older ones, down to go1.2.2, which goprobe refuses with one line: see
// cmd/goprobe's TestOldGoRefused) and the newest the module registry
// serves (the go command fetches them by GOTOOLCHAIN into its module
// cache, about 70 MB each), the machine's own, and one of each .gopclntab
// format between: go1.16.15 (Go 1.16 and 1.17: entries and funcdata as
// addresses), go1.18.10 (Go 1.18 and 1.19: offsets from runtime.text and
// go:func.*), go1.21.0 and later (Go 1.20's inline tree). go1.19 is
// Debian's prometheus.
var GoToolchains = []string{"go1.16.15", "go1.18.10", "go1.21.0", "local", "go1.27.4"}

// GoLinkModes are the ways distributions link a cgo program: the Go
// linker alone, the external (C) linker, a position-independent
// executable, and -s -w (no symbol table, no DWARF: .gopclntab only),
// externally linked or as PIE.
var GoLinkModes = []string{"internal", "external", "pie", "stripped", "pie-stripped"}

// BuildCgoWork builds testdata/cgo-work with toolchain (a GOTOOLCHAIN
// value) in link mode (one of GoLinkModes), once per source content: the
// result is cached under the user cache directory.
func BuildCgoWork(t testing.TB, toolchain, mode string) string {
	t.Helper()
	flags := map[string][]string{
		"internal":     {"-ldflags=-linkmode=internal"},
		"external":     {"-ldflags=-linkmode=external"},
		"pie":          {"-buildmode=pie"},
		"stripped":     {"-ldflags=-s -w -linkmode=external"},
		"pie-stripped": {"-buildmode=pie", "-ldflags=-s -w"},
	}[mode]
	if flags == nil {
		t.Fatalf("cgo-work: unknown link mode %q", mode)
	}
	dir := filepath.Join(Root(t), "testdata", "cgo-work")
	sum, err := hashDir(dir)
	if err != nil {
		t.Fatalf("cgo-work: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	outDir := filepath.Join(cache, "binscope-fixtures", "cgo-work-"+sum[:16])
	out := filepath.Join(outDir, toolchain+"-"+mode)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock := lockFile(filepath.Join(outDir, ".lock"))
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out
	}
	tmp := out + fmt.Sprintf(".tmp%d", os.Getpid())
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", tmp, ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+ToolPath(), "GOTOOLCHAIN="+toolchain, "CGO_ENABLED=1", "GOWORK=off", "GOFLAGS=-mod=mod")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cgo-work with %s, %s: go build: %v\n%s", toolchain, mode, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// CgoFunc is a function as a running cgo-work program reports it.
type CgoFunc struct {
	Name string
	// Addr is the runtime's entry, less where the executable was loaded:
	// the entry's address in the file.
	Addr uint64
	// File and Line are the runtime's for the entry.
	File string
	Line int
}

// CgoWorkFuncs runs a cgo-work binary with "funcs" and returns the
// functions it names (at least 8).
func CgoWorkFuncs(t testing.TB, bin string) []CgoFunc {
	t.Helper()
	out, err := exec.Command(bin, "funcs").Output()
	if err != nil {
		t.Fatalf("%s funcs: %v", bin, err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var first uint64
	found := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			first, found = p.Vaddr, true
		}
	}
	var funcs []CgoFunc
	var base uint64
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 2 {
			t.Fatalf("%s funcs: %q", bin, l)
		}
		a, err := strconv.ParseUint(fs[1], 0, 64)
		if err != nil {
			t.Fatalf("%s funcs: %q: %v", bin, l, err)
		}
		if fs[0] == "base" {
			base = a
			continue
		}
		fn := CgoFunc{Name: fs[0], Addr: a}
		if len(fs) < 3 {
			t.Fatalf("%s funcs: %q: no line", bin, l)
		}
		file, line, _ := strings.Cut(fs[2], ":")
		fn.File = file
		if fn.Line, err = strconv.Atoi(line); err != nil || fn.Line <= 0 {
			t.Fatalf("%s funcs: %q: no line", bin, l)
		}
		funcs = append(funcs, fn)
	}
	if base == 0 || !found || len(funcs) < 8 {
		t.Fatalf("%s funcs: no load base, no first segment or too few functions:\n%s", bin, out)
	}
	for i := range funcs {
		funcs[i].Addr = funcs[i].Addr - base + first
	}
	return funcs
}

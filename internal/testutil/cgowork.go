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
// oldest and the newest the module registry serves (the go command fetches
// them by GOTOOLCHAIN into its module cache, about 70 MB each) and the
// machine's own.
var GoToolchains = []string{"go1.21.0", "local", "go1.27.3"}

// GoLinkModes are the ways distributions link a cgo program: the Go
// linker alone, the external (C) linker, a position-independent
// executable, and -s -w (no symbol table, no DWARF: .gopclntab only).
var GoLinkModes = []string{"internal", "external", "pie", "stripped"}

// BuildCgoWork builds testdata/cgo-work with toolchain (a GOTOOLCHAIN
// value) in link mode (one of GoLinkModes), once per source content: the
// result is cached under the user cache directory.
func BuildCgoWork(t testing.TB, toolchain, mode string) string {
	t.Helper()
	flags := map[string][]string{
		"internal": {"-ldflags=-linkmode=internal"},
		"external": {"-ldflags=-linkmode=external"},
		"pie":      {"-buildmode=pie"},
		"stripped": {"-ldflags=-s -w -linkmode=external"},
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

// CgoWorkFuncs runs a cgo-work binary with "funcs" and returns the
// functions it names with their addresses in the file (the runtime's
// entries, less where the executable was loaded).
func CgoWorkFuncs(t testing.TB, bin string) map[string]uint64 {
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
	funcs := map[string]uint64{}
	var base uint64
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, v, _ := strings.Cut(l, " ")
		a, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("%s funcs: %q: %v", bin, l, err)
		}
		if name == "base" {
			base = a
			continue
		}
		funcs[name] = a
	}
	if base == 0 || !found || len(funcs) < 8 {
		t.Fatalf("%s funcs: no load base, no first segment or too few functions:\n%s", bin, out)
	}
	for n, a := range funcs {
		funcs[n] = a - base + first
	}
	return funcs
}

package symtab

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

type nameAddr struct {
	name string
	addr uint64
}

// readelfFuncs is what readelf -sW lists of path's function symbols
// (.symtab and .dynsym): each defined FUNC or IFUNC at a non-zero
// address, without its version, with the sizes listed for it.
func readelfFuncs(t *testing.T, path string, into map[nameAddr][]uint64) {
	t.Helper()
	out, err := exec.Command("readelf", "-sW", path).Output()
	if err != nil {
		testutil.Skipf(t, "readelf: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.HasSuffix(f[0], ":") || (f[3] != "FUNC" && f[3] != "IFUNC") || f[6] == "UND" {
			continue
		}
		addr, err1 := strconv.ParseUint(f[1], 16, 64)
		size, err2 := strconv.ParseUint(f[2], 0, 64)
		if err1 != nil || err2 != nil || addr == 0 {
			continue
		}
		name, _, _ := strings.Cut(f[7], "@")
		if name == "" {
			continue
		}
		k := nameAddr{name, addr}
		into[k] = append(into[k], size)
	}
}

// TestReadMatchesReadelf: glibc's symbols, from the library and its debug
// file, are the function symbols readelf lists in both, each name at an
// address once, with a size readelf gives it.
func TestReadMatchesReadelf(t *testing.T) {
	path := testutil.RealBinary(t, "libc")
	ef, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	dbg, _ := ef.FindDebugFile()
	if dbg == nil {
		t.Fatalf("%s: no debug file", path)
	}
	defer dbg.Close()
	want := map[nameAddr][]uint64{}
	readelfFuncs(t, path, want)
	readelfFuncs(t, dbg.Path, want)
	tab := Read(ef, dbg)
	if len(tab.Syms) < 2000 {
		t.Fatalf("%d symbols, want 2000 or more", len(tab.Syms))
	}
	got := map[nameAddr]bool{}
	for i, s := range tab.Syms {
		k := nameAddr{s.Name, s.Addr}
		if got[k] {
			t.Errorf("%s at %#x twice", s.Name, s.Addr)
		}
		got[k] = true
		if i > 0 && bySymbol(tab.Syms[i-1], s) >= 0 {
			t.Errorf("%s at %#x out of order", s.Name, s.Addr)
		}
		sizes, ok := want[k]
		if !ok {
			t.Errorf("%s at %#x: not in readelf's lists", s.Name, s.Addr)
			continue
		}
		nonzero := false
		for _, z := range sizes {
			nonzero = nonzero || z != 0
		}
		if (s.Size == 0) == nonzero || (s.Size != 0 && !containsSize(sizes, s.Size)) {
			t.Errorf("%s at %#x: size %d, readelf lists %v", s.Name, s.Addr, s.Size, sizes)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s at %#x: listed by readelf, not read", k.name, k.addr)
		}
	}
}

func containsSize(sizes []uint64, z uint64) bool {
	for _, s := range sizes {
		if s == z {
			return true
		}
	}
	return false
}

// TestReadOnce: the symbols of files opened anew are read once, and a
// file changed since is read again.
func TestReadOnce(t *testing.T) {
	src := testutil.RealBinary(t, "libc")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() *Table {
		ef, err := elfx.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ef.Close()
		return Read(ef)
	}
	first := read()
	if len(first.Syms) < 1000 {
		t.Fatalf("%d symbols, want 1000 or more", len(first.Syms))
	}
	if again := read(); again != first {
		t.Errorf("the same file read twice")
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if changed := read(); changed == first {
		t.Errorf("a file changed since was not read again")
	}
	mem, err := elfx.NewFile(bytes.NewReader(b), path)
	if err != nil {
		t.Fatal(err)
	}
	if fromMemory := Read(mem); fromMemory == first || len(fromMemory.Syms) != len(first.Syms) {
		t.Errorf("a file in memory: %d symbols (the same table: %v), want %d read anew",
			len(fromMemory.Syms), fromMemory == first, len(first.Syms))
	}
}

package pcln_test

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/internal/testutil"
)

// TestStripped: a Go binary stripped by strip lists, from .gopclntab, every
// Go function the DWARF of the unstripped binary has, at the same address
// and in the same file.
func TestStripped(t *testing.T) {
	strip, err := exec.LookPath("strip")
	if err != nil {
		testutil.Skipf(t, "strip not installed: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "inl")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(testutil.Root(t), "dwarf", "testdata", "inline", "go")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stripped := filepath.Join(dir, "inl.stripped")
	if out, err := exec.Command(strip, "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	ef, err := elfx.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if ef.HasDWARF() {
		t.Fatal("strip left DWARF")
	}
	got, err := pcln.Functions(ef)
	if err != nil {
		t.Fatal(err)
	}
	// A name can have two entries: the function and its ABI wrapper.
	byName := map[string][]uint64{}
	for _, fn := range got {
		byName[fn.Name] = append(byName[fn.Name], fn.LowPC)
	}
	df, err := dwarf.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	want, err := df.Functions(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fn := range want {
		if fn.LowPC == 0 || fn.Lang.String() != "go" {
			continue
		}
		n++
		if !slices.Contains(byName[fn.Name], fn.LowPC) {
			t.Errorf("%s at %#x in DWARF; .gopclntab: %#x", fn.Name, fn.LowPC, byName[fn.Name])
		}
	}
	if n < 100 {
		t.Fatalf("only %d Go functions compared", n)
	}
}

// TestNoTable: a C program given a .go.buildinfo section (what Has takes
// for Go) has no table to find: Open says so with ErrNoTable, which the
// model of code takes as "name the code by its symbols".
func TestNoTable(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "c.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "c")
	if out, err := exec.Command("gcc", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	info := filepath.Join(dir, "info")
	if err := os.WriteFile(info, []byte("\xff Go buildinf:\x08\x02"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("objcopy", "--add-section", ".go.buildinfo="+info, "--set-section-flags", ".go.buildinfo=alloc,data", bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if !pcln.Has(ef) {
		t.Fatal("Has: false for a file with .go.buildinfo")
	}
	if _, err := pcln.Open(ef); !errors.Is(err, pcln.ErrNoTable) {
		t.Fatalf("Open: %v, want ErrNoTable", err)
	}
	m, err := code.NewFromELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Lookup("main")) != 1 {
		t.Errorf("the model names no main from the symbol table")
	}
}

// TestCorruptInlines: a table whose header points its function table,
// its names or its pc-value tables past the table's end gives an error
// that says so, from the reader's own bounds checks (it once indexed past
// the slice and recovered the panic). The test binary itself is
// the Go binary read (Go 1.20 and later: the function table's offset is
// the header's word at 64).
func TestCorruptInlines(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elfx.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	tab, err := pcln.Open(ef)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := tab.Inlines(ef)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) < 100 {
		t.Fatalf("only %d functions with an inline tree in the test binary", len(tree))
	}
	good := tab.Data
	for _, c := range []struct {
		name string
		off  int
		v    uint64
	}{
		{"function table past the end", 64, uint64(len(good)) + 1},
		{"function table at the last byte", 64, uint64(len(good)) - 1},
		{"function names past the end", 32, 1 << 40},
		{"pc-value tables past the end", 56, 1 << 40},
	} {
		tab.Data = slices.Clone(good)
		binary.LittleEndian.PutUint64(tab.Data[c.off:], c.v)
		tree, err := tab.Inlines(ef)
		// Said by the reader's own check, not by a recovered index
		// panic (runtime error: slice bounds out of range).
		if err == nil || !strings.Contains(err.Error(), "corrupt inline tree") || !strings.Contains(err.Error(), "past the table's end") {
			t.Errorf("%s: %d trees, error %v; want a corrupt inline tree past the table's end", c.name, len(tree), err)
		}
	}
}

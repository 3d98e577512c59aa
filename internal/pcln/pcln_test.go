package pcln_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

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

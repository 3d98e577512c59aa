package dwarf

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/testutil"
)

// TestSavedSections: the C++ fixture with its DWARF compressed (objcopy
// --compress-debug-sections), opened with SavedSections, writes its
// sections inflated to the index cache, each the bytes binutils'
// decompression gives; the next open reads them from the entry, mapped,
// inflating nothing, and finds the same functions as with the cache off.
func TestSavedSections(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		testutil.Skipf(t, "objcopy not installed: %v", err)
	}
	dir := t.TempDir()
	bin, plain := filepath.Join(dir, "z"), filepath.Join(dir, "plain")
	src := testutil.Fixture(t, "cpp-layouts").Path
	for _, args := range [][]string{{"--compress-debug-sections=zlib", src, bin}, {"--decompress-debug-sections", bin, plain}} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv(cache.Env, filepath.Join(dir, "cache"))
	opts := &Options{SavedSections: true}
	funcNames := func(f *File) []string {
		fns, err := f.Functions(nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, fn := range fns {
			out = append(out, fn.Name)
		}
		return out
	}

	cold, err := Open(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	secs := layoutSections(cold.Debug.CompressedDWARF())
	want := funcNames(cold)
	cold.Close() // waits for the entry
	if len(secs) < 3 || len(want) < 10 {
		t.Fatalf("%d compressed sections, %d functions: want at least 3 and 10", len(secs), len(want))
	}
	skey, _ := cold.sectionsKey(secs)
	blob, _, ok := cache.Open(nil).Map("sections", savedVersion, skey)
	if !ok {
		t.Fatal("no sections entry after the cold open")
	}
	ef, err := elf.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for _, s := range secs {
		b, err := ef.Section(s.name).Data()
		if err != nil {
			t.Fatal(err)
		}
		if s.off+s.len > uint64(len(blob)) || !slices.Equal(blob[s.off:s.off+s.len], b) {
			t.Errorf("%s: the entry's %d bytes at %d are not objcopy's %d", s.name, s.len, s.off, len(b))
		}
	}

	warm, err := Open(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	// The kernel's list of this process's mappings says which of them
	// hold the entry's file.
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	mapped := func(p uintptr) bool {
		for _, l := range strings.Split(string(maps), "\n") {
			var lo, hi uintptr
			f := strings.Fields(l)
			if len(f) == 6 && f[5] == cache.Open(nil).Path("sections", skey) {
				fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
				if p >= lo && p < hi {
					return true
				}
			}
		}
		return false
	}
	inflated := warm.Debug.InflatedSections()
	for _, s := range secs {
		if b := inflated[s.name]; len(b) == 0 || !mapped(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) {
			t.Errorf("%s was inflated again, not read from the entry", s.name)
		}
	}
	off, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if got, base := funcNames(warm), funcNames(off); !slices.Equal(got, base) || !slices.Equal(want, base) {
		t.Errorf("functions: warm %d, cold %d, without the cache %d; not the same", len(got), len(want), len(base))
	}
}

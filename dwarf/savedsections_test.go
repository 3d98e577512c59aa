package dwarf

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
// decompression gives (on Linux inflated straight into the entry's file,
// mapped, not on the heap); the next open reads them from the entry,
// mapped, inflating nothing, and finds the same functions as with the
// cache off.
func TestSavedSections(t *testing.T) {
	bin, plain := compressedFixture(t)
	opts := &Options{SavedSections: true}

	cold, err := Open(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	secs := layoutSections(cold.Debug.CompressedDWARF())
	want := funcNames(t, cold)
	cold.Close() // waits for the entry
	if len(secs) < 3 || len(want) < 10 {
		t.Fatalf("%d compressed sections, %d functions: want at least 3 and 10", len(secs), len(want))
	}
	skey, _ := cold.sectionsKey(secs)
	blob, _, ok := cache.Open(nil).Map("sections", savedVersion, skey)
	if !ok {
		t.Fatal("no sections entry after the cold open")
	}
	sameAsObjcopy(t, plain, secs, blob)
	if runtime.GOOS == "linux" {
		readFromEntry(t, cold, secs, skey) // the entry renamed into place
	}

	warm, err := Open(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	readFromEntry(t, warm, secs, skey)
	off, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if got, base := funcNames(t, warm), funcNames(t, off); !slices.Equal(got, base) || !slices.Equal(want, base) {
		t.Errorf("functions: warm %d, cold %d, without the cache %d; not the same", len(got), len(want), len(base))
	}
}

// TestSavedSectionsCorrupt: a compressed .debug_info that does not
// inflate fails the open, and the sections entry begun for it is dropped,
// not left in the cache.
func TestSavedSectionsCorrupt(t *testing.T) {
	bin, _ := compressedFixture(t)
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	s := ef.Section(".debug_info")
	ef.Close()
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 || s.FileSize < 200 {
		t.Fatalf("objcopy left .debug_info uncompressed: %+v", s)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for i := s.Offset + s.FileSize/2; i < s.Offset+s.FileSize/2+64; i++ {
		b[i] ^= 0xa5
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(bin, &Options{SavedSections: true}); err == nil {
		f.Close()
		t.Fatal("a .debug_info that does not inflate opened")
	}
	filepath.WalkDir(os.Getenv(cache.Env), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("%s left in the cache", p)
		}
		return nil
	})
}

// TestMapSections: opened with MapSections and an empty cache, the
// compressed C++ fixture's sections are inflated into the "sections"
// entry (the bytes binutils' decompression gives) and read from it,
// mapped, on the first open; the functions are those found with the
// cache off. Once read, the entry's pages are resident; evicted, none
// is (the kernel's account of the mapping), and they read the same.
func TestMapSections(t *testing.T) {
	bin, plain := compressedFixture(t)
	f, err := Open(bin, &Options{SavedSections: true, MapSections: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	secs := layoutSections(f.Debug.CompressedDWARF())
	skey, _ := f.sectionsKey(secs)
	if len(secs) < 3 {
		t.Fatalf("%d compressed sections, want at least 3", len(secs))
	}
	readFromEntry(t, f, secs, skey)
	sameAsObjcopy(t, plain, secs, f.mapped)
	off, err := Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	got, want := funcNames(t, f), funcNames(t, off)
	if !slices.Equal(got, want) || len(want) < 10 {
		t.Errorf("functions: %d mapped, %d without the cache; not the same, or fewer than 10", len(got), len(want))
	}
	path := cache.Open(nil).Path("sections", skey)
	sum := 0
	for _, b := range f.mapped {
		sum += int(b)
	}
	if kb := residentKB(t, path); kb < len(f.mapped)/1024/2 {
		t.Errorf("%d kB of the %d kB entry resident once read, want at least half", kb, len(f.mapped)/1024)
	}
	f.evict(f.mapped)
	if kb := residentKB(t, path); kb > 8 { // the pages the data shares with the entry's head and tail
		t.Errorf("%d kB of the entry resident once evicted, want at most 8", kb)
	}
	again := 0
	for _, b := range f.mapped {
		again += int(b)
	}
	if again != sum {
		t.Errorf("the entry's bytes sum to %d once evicted, %d before", again, sum)
	}
}

// compressedFixture is the cpp-layouts fixture with its DWARF compressed
// by objcopy, and the same decompressed by objcopy; the index cache is
// an empty directory for the test.
func compressedFixture(t *testing.T) (bin, plain string) {
	return compressedCopy(t, testutil.Fixture(t, "cpp-layouts").Path)
}

// compressedCopy is the file src with its DWARF compressed by objcopy,
// and the same decompressed by objcopy; the index cache is an empty
// directory for the test.
func compressedCopy(t *testing.T, src string) (bin, plain string) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		testutil.Skipf(t, "objcopy not installed: %v", err)
	}
	dir := t.TempDir()
	bin, plain = filepath.Join(dir, "z"), filepath.Join(dir, "plain")
	for _, args := range [][]string{{"--compress-debug-sections=zlib", src, bin}, {"--decompress-debug-sections", bin, plain}} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, out)
		}
	}
	t.Setenv(cache.Env, filepath.Join(dir, "cache"))
	return bin, plain
}

func funcNames(t *testing.T, f *File) []string {
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

// sameAsObjcopy checks the sections secs laid out in blob against
// objcopy's decompression of them in plain.
func sameAsObjcopy(t *testing.T, plain string, secs []savedSection, blob []byte) {
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
}

// readFromEntry checks that f reads every section of secs from the
// "sections" entry of key skey: the kernel's list of this process's
// mappings says which of them hold the entry's file.
func readFromEntry(t *testing.T, f *File, secs []savedSection, skey string) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	mapped := func(p uintptr) bool {
		for _, l := range strings.Split(string(maps), "\n") {
			var lo, hi uintptr
			fs := strings.Fields(l)
			if len(fs) == 6 && fs[5] == cache.Open(nil).Path("sections", skey) {
				fmt.Sscanf(fs[0], "%x-%x", &lo, &hi)
				if p >= lo && p < hi {
					return true
				}
			}
		}
		return false
	}
	inflated := f.Debug.InflatedSections()
	for _, s := range secs {
		if b := inflated[s.name]; len(b) == 0 || !mapped(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) {
			t.Errorf("%s was inflated into memory, not read from the entry", s.name)
		}
	}
}

// residentKB is how many kB of the file at path this process's mappings
// of it hold resident (/proc/self/smaps).
func residentKB(t *testing.T, path string) int {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	kb, in := 0, false
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) == 6 && fs[5] == path
		} else if in && len(fs) == 3 && fs[0] == "Rss:" {
			var n int
			fmt.Sscan(fs[1], &n)
			kb += n
		}
	}
	return kb
}

package elfx_test

import (
	"bytes"
	"debug/elf"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// TestLazyEqualsDebugElf: a section read through Lazy, in part and whole,
// is what debug/elf reads: glibc's debug file (zlib-compressed DWARF,
// SHF_COMPRESSED) and a debug Python (uncompressed).
func TestLazyEqualsDebugElf(t *testing.T) {
	for _, name := range []string{"libc", "python3.11d"} {
		t.Run(name, func(t *testing.T) {
			path := testutil.DebugFile(testutil.RealBinary(t, name))
			f, err := elfx.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			compressed, n := 0, 0
			for _, s := range f.Sections {
				if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
					continue
				}
				want, err := s.Data()
				if err != nil {
					t.Fatalf("%s: debug/elf: %v", s.Name, err)
				}
				l, err := f.LazySection(s.Name)
				if err != nil {
					t.Fatal(err)
				}
				if l.Size() != uint64(len(want)) {
					t.Fatalf("%s: size %d, debug/elf read %d bytes", s.Name, l.Size(), len(want))
				}
				for _, k := range []uint64{0, 1, 12, 4096, l.Size() / 3, l.Size()} {
					got, err := l.Prefix(k)
					if err != nil {
						t.Fatalf("%s: Prefix(%d): %v", s.Name, k, err)
					}
					if k = min(k, l.Size()); !bytes.Equal(got, want[:k]) {
						t.Fatalf("%s: the first %d bytes differ from debug/elf's", s.Name, k)
					}
				}
				if s.Flags&elf.SHF_COMPRESSED != 0 {
					compressed++
				}
				n++
			}
			if n < 10 || (name == "libc" && compressed < 5) {
				t.Errorf("%d sections compared, %d compressed: want 10, and 5 compressed in glibc's", n, compressed)
			}
		})
	}
}

// TestLazyCorruptSize: a compressed section whose header claims far more
// bytes than it holds is an error saying how far reading went, without
// allocating what the header claims.
func TestLazyCorruptSize(t *testing.T) {
	path := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := f.LazySection(".debug_info")
	if err != nil {
		t.Fatal(err)
	}
	real := l.Size()
	l.Claim(1<<40, f.Section(".debug_info").FileSize)
	if _, err := l.All(); err == nil {
		t.Fatalf("a section claiming 1 TB read whole")
	}
	if l.Read() != real {
		t.Errorf("%d bytes read before the error, want the %d the stream holds", l.Read(), real)
	}
	if l.Allocated() > 1<<27 {
		t.Errorf("%d bytes allocated for a stream of %d", l.Allocated(), real)
	}
}

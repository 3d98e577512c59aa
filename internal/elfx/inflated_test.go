package elfx_test

import (
	"bytes"
	"debug/elf"
	"sync"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// TestInflateAhead: glibc's compressed DWARF sections, each given a
// buffer of its size (InflateInto) and inflated ahead in steps of 64 kB,
// read by several readers at once asking for growing prefixes while it
// inflates: every prefix is what debug/elf inflates, and so is the whole;
// inflated straight into the buffer, and through a window of 100 kB
// whose pieces a writer puts into it.
func TestInflateAhead(t *testing.T) {
	for _, through := range []bool{false, true} {
		t.Run(map[bool]string{false: "into", true: "through"}[through], func(t *testing.T) {
			inflateAhead(t, through)
		})
	}
}

func inflateAhead(t *testing.T, through bool) {
	defer elfx.SetAheadStep(64 << 10)()
	defer elfx.SetThroughRoom(100 << 10)()
	path := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]byte{}
	var names []string
	for name := range f.CompressedDWARF() {
		if want[name], err = f.Section(name).Data(); err != nil {
			t.Fatalf("%s: debug/elf: %v", name, err)
		}
		buf := make([]byte, len(want[name]))
		var write func(b []byte, off int64) error
		if through {
			written := 0
			write = func(b []byte, off int64) error {
				if off != int64(written) {
					t.Errorf("%s: %d bytes written at %d, after %d", name, len(b), off, written)
				}
				written += copy(buf[off:], b)
				return nil
			}
		}
		if !f.InflateInto(name, buf, write) {
			t.Fatalf("%s: InflateInto refused a buffer of its size", name)
		}
		names = append(names, name)
	}
	if len(names) < 5 || len(want[".debug_info"]) < 1<<20 {
		t.Fatalf("%d compressed sections, %d bytes of .debug_info: want 5 and 1 MB", len(names), len(want[".debug_info"]))
	}
	if !f.InflateAhead(names...) {
		t.Fatal("InflateAhead: not every section inflates ahead")
	}
	var wg sync.WaitGroup
	for _, name := range names {
		l, err := f.LazySection(name)
		if err != nil {
			t.Fatal(err)
		}
		w := want[name]
		for r := 1; r <= 3; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := uint64(len(w)) / 97 * uint64(r); ; k = min(k*2+1, uint64(len(w))) {
					got, err := l.Prefix(k)
					if err != nil || !bytes.Equal(got, w[:k]) {
						t.Errorf("%s: Prefix(%d): %d bytes, %v; not debug/elf's", name, k, len(got), err)
						return
					}
					if k == uint64(len(w)) {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	inflated := f.InflatedSections()
	for _, name := range names {
		if !bytes.Equal(inflated[name], want[name]) {
			t.Errorf("%s: %d bytes inflated whole, debug/elf %d; not the same", name, len(inflated[name]), len(want[name]))
		}
	}
	if s := f.Section(".debug_info"); s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Error(".debug_info not compressed")
	}
}

package elfx_test

import (
	"debug/dwarf"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/dwarftest"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// relocSource has an address (a function's low_pc, a global's location)
// and section offsets (strings, line table, ranges) for relocations to fix.
const relocSource = `struct point { int x, y; long z; };
static int helper(struct point *p) { return p->x + p->y; }
int counter;
int use(struct point *p, int n) { for (int i = 0; i < n; i++) counter += helper(p + i); return counter; }
`

// TestDWARFEqualsDebugElf: the DWARF elfx reads and relocates itself, its
// bytes kept for the scanner, decodes to the entries debug/elf's DWARF
// gives, on relocatable objects of every machine clang targets here
// (relocations with and without addends, 32- and 64-bit, both byte
// orders), on sections compressed the GNU way (.zdebug_*) and on an
// object with DWARF 4 type units (.debug_types).
func TestDWARFEqualsDebugElf(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "t.c")
	if err := os.WriteFile(src, []byte(relocSource), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(name string, cmd ...string) string {
		out := filepath.Join(dir, name+".o")
		if b, err := exec.Command(cmd[0], append(cmd[1:], "-o", out, src)...).CombinedOutput(); err != nil {
			testutil.Skipf(t, "%s: %v: %s", name, err, b)
			return ""
		}
		return out
	}
	var objs []string
	for _, target := range []string{"x86_64-linux-gnu", "i386-linux-gnu", "arm-linux-gnueabi", "aarch64-linux-gnu",
		"riscv64-linux-gnu", "powerpc64le-linux-gnu", "powerpc-linux-gnu", "s390x-linux-gnu", "mips-linux-gnu",
		"mips64el-linux-gnuabi64"} {
		objs = append(objs, build(target+"-v4", "clang", "-target", target, "-gdwarf-4", "-O1", "-c"))
		if !strings.HasPrefix(target, "powerpc-") && !strings.HasPrefix(target, "s390x") && !strings.HasPrefix(target, "mips-") {
			// debug/dwarf reads no big-endian DWARF 5 string
			// offsets ("underflow"): no oracle there.
			objs = append(objs, build(target+"-v5", "clang", "-target", target, "-gdwarf-5", "-O1", "-c"))
		}
	}
	types := build("types", "gcc", "-gdwarf-4", "-fdebug-types-section", "-O1", "-c")
	objs = append(objs, types, build("v2", "gcc", "-gdwarf-2", "-O1", "-c"))
	zdebug := filepath.Join(dir, "zdebug.o")
	if b, err := exec.Command("objcopy", "--compress-debug-sections=zlib-gnu", types, zdebug).CombinedOutput(); err != nil {
		testutil.Skipf(t, "objcopy: %v: %s", err, b)
	}
	objs = append(objs, zdebug)
	for _, path := range objs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := elfx.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := dwarftest.Data(f)
			if err != nil {
				t.Fatal(err)
			}
			if f.DWARFSection(".debug_info") == nil || f.DWARFSection(".debug_abbrev") == nil {
				t.Fatalf("the bytes of .debug_info and .debug_abbrev are not kept")
			}
			want, err := f.File.DWARF()
			if err != nil {
				t.Fatalf("debug/elf: %v", err)
			}
			n := sameEntries(t, got.Reader(), want.Reader())
			if n < 10 {
				t.Fatalf("%d entries compared, want at least 10", n)
			}
		})
	}
}

// sameEntries compares two readers' entries, returning how many.
func sameEntries(t *testing.T, got, want *dwarf.Reader) int {
	t.Helper()
	n := 0
	for {
		g, err := got.Next()
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("entry %d: got %+v, debug/elf %+v", n, g, w)
		}
		if g == nil {
			return n
		}
		n++
	}
}

// TestNoPromotedDWARF: an elfx.File does not lend debug/elf's DWARF
// through its embedded *elf.File: f.DWARF() would read the sections past
// Guard and apart from those ReadDWARF keeps. The method in its place
// returns nothing and takes a value of an unexported type, which no other
// package can pass.
func TestNoPromotedDWARF(t *testing.T) {
	m, ok := reflect.TypeFor[*elfx.File]().MethodByName("DWARF")
	if !ok {
		return // nothing named DWARF: f.DWARF() does not compile either
	}
	ft := m.Type // the receiver is In(0)
	if ft.NumOut() != 0 || ft.NumIn() != 2 || ft.In(1).PkgPath() != reflect.TypeFor[elfx.File]().PkgPath() || ft.In(1).Name() == "" ||
		ft.In(1).Name()[0] < 'a' || ft.In(1).Name()[0] > 'z' {
		t.Errorf("(*elfx.File).DWARF is %v: callable as debug/elf's, past elfx's reading of the sections", ft)
	}
}

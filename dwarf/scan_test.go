package dwarf

import (
	"debug/dwarf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// scanInputs are binaries of every producer the project reads, with the
// fewest DIEs each has: GCC's DWARF 5 (C, C++ -O2, glibc and libstdc++
// in separate or complete debug files), GCC's DWARF 2, clang's DWARF 5
// (names through .debug_str_offsets; addresses through .debug_addr and
// range lists by index at -O2), Go's, rustc's and Zig's (LLVM,
// DWARF 4), GCC's relocatable objects (whose sections elfx
// relocates, as debug/elf does) of DWARF 2 to 5, with type units
// (.debug_types) and with sections compressed the GNU way (.zdebug_*, as
// Go before 1.20 wrote them too), and clang's objects for 32-bit machines of
// either byte order.
var scanInputs = []struct {
	name string
	path func(t *testing.T) string
	min  int
}{
	{"c-layouts-dwarf2", func(t *testing.T) string { return testutil.Fixture(t, "c-layouts-dwarf2").Path }, 100},
	{"c-layouts-clang", clangLayouts, 100},
	{"cpp-real", func(t *testing.T) string { return testutil.Fixture(t, "cpp-real").Path }, 50000},
	{"cpp-real-clang", func(t *testing.T) string { return testutil.Fixture(t, "cpp-real-clang").Path }, 50000},
	{"go-cmd", func(t *testing.T) string { return testutil.Fixture(t, "go-cmd").Path }, 100000},
	{"rust-real", func(t *testing.T) string { return testutil.Fixture(t, "rust-real").Path }, 10000},
	{"zig-std", func(t *testing.T) string { return testutil.Fixture(t, "zig-std").Path }, 1000},
	{"libc", func(t *testing.T) string { return testutil.RealBinary(t, "libc") }, 500000},
	{"libstdc++", func(t *testing.T) string { return testutil.RealBinary(t, "libstdc++") }, 400000},
	{"inl-object", func(t *testing.T) string { return object(t, "gcc", "dwarf/testdata/inline/inl.c") }, 50},
	{"cpp-real-object", func(t *testing.T) string {
		return object(t, "g++", "testdata/fixtures/cpp-real/real.cc", "-std=c++17")
	}, 50000},
	{"inl-object-dwarf2", func(t *testing.T) string { return object(t, "gcc", "dwarf/testdata/inline/inl.c", "-gdwarf-2") }, 50},
	{"inl-object-dwarf3", func(t *testing.T) string { return object(t, "gcc", "dwarf/testdata/inline/inl.c", "-gdwarf-3") }, 50},
	{"cpp-real-object-types", func(t *testing.T) string {
		return object(t, "g++", "testdata/fixtures/cpp-real/real.cc", "-std=c++17", "-gdwarf-4", "-fdebug-types-section")
	}, 10000},
	{"inl-object-zdebug", func(t *testing.T) string {
		return zlibGNU(t, object(t, "gcc", "dwarf/testdata/inline/inl.c", "-gdwarf-4", "-fdebug-types-section"))
	}, 50},
	{"cgo-work-go1.18", func(t *testing.T) string { return testutil.BuildCgoWork(t, "go1.18.10", "internal") }, 20000},
	{"foreign-i386", func(t *testing.T) string {
		return object(t, "clang", "dwarf/testdata/foreign/foreign.c", "-target", "i386-linux-gnu")
	}, 40},
	{"foreign-ppc32-dwarf4", func(t *testing.T) string {
		return object(t, "clang", "dwarf/testdata/foreign/foreign.c", "-target", "powerpc-linux-gnu", "-gdwarf-4")
	}, 40},
}

// zlibGNU is a copy of the object at path with its DWARF compressed the
// GNU way: .zdebug_* sections.
func zlibGNU(t *testing.T, path string) string {
	out := path + ".zdebug.o"
	if _, err := os.Stat(out); err == nil {
		return out
	}
	if msg, err := exec.Command("objcopy", "--compress-debug-sections=zlib-gnu", path, out).CombinedOutput(); err != nil {
		testutil.Skipf(t, "objcopy: %v\n%s", err, msg)
	}
	return out
}

// object compiles src (a path from the repository's root) with compiler
// at -O2 into a relocatable object, once per test binary: every test of
// the scan inputs reads the same objects.
func object(t *testing.T, compiler, src string, flags ...string) string {
	objects.Lock()
	defer objects.Unlock()
	key := strings.Join(append([]string{compiler, src}, flags...), " ")
	if out, ok := objects.m[key]; ok {
		return out
	}
	if objects.dir == "" {
		dir, err := os.MkdirTemp("", "binscope-dwarf-objects")
		if err != nil {
			t.Fatal(err)
		}
		objects.dir, objects.m = dir, map[string]string{}
	}
	out := filepath.Join(objects.dir, fmt.Sprintf("%d-%s.o", len(objects.m), filepath.Base(src)))
	args := append([]string{"-g", "-O2", "-c", "-o", out, filepath.Join(testutil.Root(t), src)}, flags...)
	if msg, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		testutil.Skipf(t, "%s: %v\n%s", compiler, err, msg)
	}
	objects.m[key] = out
	return out
}

// objects are the objects object built, by build line, in dir.
var objects struct {
	sync.Mutex
	dir string
	m   map[string]string
}

// TestMain removes the objects the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if objects.dir != "" {
		os.RemoveAll(objects.dir)
	}
	os.Exit(code)
}

// eachScanInput runs test on each of scanInputs, opened.
func eachScanInput(t *testing.T, test func(t *testing.T, f *File, min int)) {
	for _, in := range scanInputs {
		t.Run(in.name, func(t *testing.T) {
			f, err := Open(in.path(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			test(t, f, in.min)
		})
	}
}

// TestScanAgreesWithReader: the scan sees every DIE debug/dwarf's Reader
// sees, at the same offset with the same tag and children, and reads the
// same names.
func TestScanAgreesWithReader(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		sc := f.newScan()
		if sc == nil {
			t.Fatal("no scan: the sections' bytes are not kept")
		}
		ss := f.strSections()
		r := f.oracle().Reader()
		n, names := 0, 0
		for {
			e, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			d, ok, serr := sc.next()
			if serr != nil {
				t.Fatalf("scan: %v after %d DIEs (the Reader is at %#x)", serr, n, e.Offset)
			}
			if e == nil || !ok {
				if e != nil || ok {
					t.Fatalf("after %d DIEs, the Reader ends: %v, the scan ends: %v", n, e == nil, !ok)
				}
				break
			}
			n++
			if d.tag != Tag(e.Tag) || (e.Tag != 0 && (d.off != Offset(e.Offset) || d.children != e.Children)) {
				t.Fatalf("DIE %d: scan %#x %v children %v, Reader %#x %v children %v", n, d.off, d.tag, d.children, e.Offset, e.Tag, e.Children)
			}
			if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
				ss.base = -1
				if base, ok := e.Val(dwarf.AttrStrOffsetsBase).(int64); ok {
					ss.base = base
				}
			}
			if name, ok := sc.name(d, ss); ok {
				names++
				if want := readerStr(e, AttrName); name != want {
					t.Fatalf("DIE %#x: scan's name %q, Reader's %q", d.off, name, want)
				}
			}
		}
		if n < min {
			t.Errorf("%d DIEs compared, want at least %d", n, min)
		}
		t.Logf("%d DIEs and %d names agree", n, names)
	})
}

// TestScanWalkEqualsReaderWalk: the functions a walk over the scan finds
// are those a walk over debug/dwarf's Reader finds, attribute for
// attribute, with and without parameters.
func TestScanWalkEqualsReaderWalk(t *testing.T) {
	for _, in := range scanInputs {
		t.Run(in.name, func(t *testing.T) {
			path := in.path(t)
			for _, params := range []bool{false, true} {
				var got [2][]string
				for i := range got {
					f, err := Open(path, nil)
					if err != nil {
						t.Fatal(err)
					}
					o := FuncOptions{Params: params}
					var fns []*types.Func
					if i == 0 {
						if fns, err = f.functions(o); err != nil {
							t.Fatal(err)
						}
					} else {
						fns = readerFunctions(t, f, o)
					}
					for _, fn := range fns {
						got[i] = append(got[i], describe(fn))
					}
					f.Close()
				}
				if len(got[0]) != len(got[1]) {
					t.Fatalf("params=%v: %d functions over the scan, %d over the Reader", params, len(got[0]), len(got[1]))
				}
				for i := range got[0] {
					if got[0][i] != got[1][i] {
						t.Fatalf("params=%v: function %d:\n\tscan   %s\n\treader %s", params, i, got[0][i], got[1][i])
					}
				}
				if len(got[0]) < 5 {
					t.Errorf("params=%v: %d functions, want at least 5", params, len(got[0]))
				}
			}
		})
	}
}

// describe is every attribute of fn a walk fills.
func describe(fn *types.Func) string {
	s := fmt.Sprintf("%s|%s|%v|%#x|%d|%v|%+v|ext=%v inl=%v var=%v", fn.Name, fn.Linkage, fn.Lang, fn.LowPC, fn.Size, fn.Ranges,
		fn.Decl, fn.External, fn.DeclaredInline, fn.Variadic)
	for _, in := range fn.Instances {
		s += fmt.Sprintf("|inst %#x %v sites %d", in.Entry, in.Ranges, len(in.Sites))
	}
	for _, site := range fn.Inlined {
		s += fmt.Sprintf("|site %s %s:%d:%d %#x %v", site.Caller, site.CallFile, site.CallLine, site.CallColumn, site.EntryPC, site.Ranges)
	}
	for _, p := range fn.Params {
		t := "<nil>"
		if p.Type != nil {
			t = p.Type.TypeName()
		}
		s += fmt.Sprintf("|param %s %s %s %#x", p.Name, t, p.Loc.String(), p.PC)
	}
	return s
}

// TestScanIndexEqualsReaderIndex: the type index built over a scan, its
// entries decoded on demand, is the index built over debug/dwarf's
// Reader: the same nodes, scopes, units and children, and each node's
// entry equal field for field.
func TestScanIndexEqualsReaderIndex(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		lazy, eager := bothIndexes(t, f)
		sameIndex(t, lazy, eager, min)
	})
}

// bothIndexes builds f's type index over a scan and over debug/dwarf's
// Reader.
func bothIndexes(t *testing.T, f *File) (lazy, eager *index) {
	t.Helper()
	lazy, err := f.indexWith(f.dieEntries(typeWalk))
	if err != nil {
		t.Fatal(err)
	}
	return lazy, readerIndex(t, f)
}

// sameIndex checks that lazy, an index built over a scan, is eager, the
// index built over debug/dwarf's Reader, comparing at least min/10 nodes.
func sameIndex(t *testing.T, lazy, eager *index, min int) {
	t.Helper()
	if lazy.nodes.size() != eager.nodes.size() || len(lazy.named) != len(eager.named) || len(lazy.units) != len(eager.units) {
		t.Fatalf("scan: %d nodes, %d named, %d units; Reader: %d, %d, %d", lazy.nodes.size(), len(lazy.named), len(lazy.units),
			eager.nodes.size(), len(eager.named), len(eager.units))
	}
	n := 0
	eager.nodes.each(func(off Offset, want *node) {
		got := lazy.nodes.get(off)
		if got == nil {
			t.Fatalf("node %#x missing from the scan's index", off)
		}
		if d := nodeDiff(got, want); d != "" {
			t.Fatalf("node %#x: %s", off, d)
		}
		n++
	})
	for i := range eager.named {
		if lazy.named[i].off != eager.named[i].off {
			t.Fatalf("named[%d]: %#x, want %#x", i, lazy.named[i].off, eager.named[i].off)
		}
	}
	if n < min/10 {
		t.Errorf("%d nodes compared, want at least %d", n, min/10)
	}
}

func nodeDiff(got, want *node) string {
	if got.scope != want.scope || got.lang != want.lang || got.top != want.top || got.unit != want.unit || len(got.kids) != len(want.kids) {
		return fmt.Sprintf("scope %q lang %v top %v unit %d kids %d; want %q %v %v %d %d", got.scope, got.lang, got.top, got.unit,
			len(got.kids), want.scope, want.lang, want.top, want.unit, len(want.kids))
	}
	for i := range got.kids {
		if got.kids[i].off != want.kids[i].off {
			return fmt.Sprintf("kid %d at %#x, want %#x", i, got.kids[i].off, want.kids[i].off)
		}
	}
	ge, gerr := got.entry()
	we, werr := want.entry()
	if gerr != nil || werr != nil {
		return fmt.Sprintf("entry: %v; want %v", gerr, werr)
	}
	if ge.Offset != we.Offset || ge.Tag != we.Tag || ge.Children != we.Children || len(ge.Field) != len(we.Field) {
		return fmt.Sprintf("entry %+v, want %+v", ge, we)
	}
	for i := range ge.Field {
		if fmt.Sprint(ge.Field[i]) != fmt.Sprint(we.Field[i]) {
			return fmt.Sprintf("field %d %v, want %v", i, ge.Field[i], we.Field[i])
		}
	}
	return ""
}

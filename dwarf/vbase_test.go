package dwarf_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// vbaseSource is the classic diamond: A is one subobject of D, placed by
// the vtable. The program prints each sizeof as the compiler sees it.
const vbaseSource = `// g++ -g -O0 vbase.cc -o vbase
#include <cstdio>
struct A { int a; };
struct B : virtual A { int b; };
struct C : virtual A { int c; };
struct D : B, C { int d; };
D g_d;
int main() {
	std::printf("A %zu\nB %zu\nC %zu\nD %zu\n", sizeof(A), sizeof(B), sizeof(C), sizeof(D));
	return g_d.a;
}
`

// gdbLayout is what gdb's ptype /o says of a type: its size and the offsets
// of its own (top-level, non-bitfield) data members by name.
type gdbLayout struct {
	size    int64
	members map[string]int64
}

var (
	gdbMember = regexp.MustCompile(`^/\*\s+(\d+)\s+\|\s+\d+ \*/ {4}\S.*?(\w+);$`)
	gdbTotal  = regexp.MustCompile(`/\* total size \(bytes\):\s+(\d+) \*/`)
)

// ptypeO runs gdb -batch -ex 'ptype /o NAME' for each name on bin.
func ptypeO(t *testing.T, bin string, names ...string) map[string]gdbLayout {
	t.Helper()
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	args := []string{"-batch", "-nx"}
	for _, n := range names {
		args = append(args, "-ex", "echo @@@ "+n+"\\n", "-ex", "ptype /o "+n)
	}
	out, err := exec.Command(gdb, append(args, bin)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	res := map[string]gdbLayout{}
	var cur string
	for _, line := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(line, "@@@ "); ok {
			cur = n
			res[cur] = gdbLayout{size: -1, members: map[string]int64{}}
			continue
		}
		l := res[cur]
		if m := gdbMember.FindStringSubmatch(line); m != nil && l.members != nil {
			off, _ := strconv.ParseInt(m[1], 10, 64)
			l.members[m[2]] = off
		} else if m := gdbTotal.FindStringSubmatch(line); m != nil && l.size < 0 {
			l.size, _ = strconv.ParseInt(m[1], 10, 64)
			res[cur] = l
		}
	}
	return res
}

// checkAgainstGDB compares each named struct's size and member offsets with
// gdb's, and requires the named virtual bases among its Dynamic members.
func checkAgainstGDB(t *testing.T, spec *types.Spec, bin string, vbases map[string][]string) {
	t.Helper()
	var names []string
	for n := range vbases {
		names = append(names, n)
	}
	want := ptypeO(t, bin, names...)
	for _, n := range names {
		g := want[n]
		ts := spec.Lookup(n)
		if len(ts) == 0 {
			t.Errorf("%s: not found", n)
			continue
		}
		s, ok := types.Resolve(ts[0]).(*types.Struct)
		if !ok {
			t.Errorf("%s: %T, want a struct", n, ts[0])
			continue
		}
		if g.size < 0 {
			t.Errorf("%s: gdb gave no size", n)
		} else if s.ByteSize != g.size {
			t.Errorf("%s: size %d, gdb says %d", n, s.ByteSize, g.size)
		}
		for _, m := range s.Members {
			if m.Embedded || m.Artificial || m.BitSize != 0 {
				continue
			}
			off, ok := g.members[m.Name]
			if !ok {
				t.Errorf("%s.%s: not in gdb's ptype /o", n, m.Name)
			} else if m.ByteOffset() != off {
				t.Errorf("%s.%s: offset %d, gdb says %d", n, m.Name, m.ByteOffset(), off)
			}
		}
		var got []string
		for _, m := range s.Dynamic {
			if !m.Virtual || m.Dynamic != types.DynamicRuntime {
				t.Errorf("%s: dynamic member %s is not a virtual base read at run time", n, m.Name)
			}
			got = append(got, m.Type.TypeName())
		}
		if fmt.Sprint(got) != fmt.Sprint(vbases[n]) {
			t.Errorf("%s: virtual bases %v, want %v", n, got, vbases[n])
		}
	}
}

// TestVirtualBase: a program with a virtual base loads whole; the base is a
// dynamic member (its offset is in the vtable), the other members and the
// sizes are the compiler's (sizeof) and gdb's (ptype /o).
func TestVirtualBase(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		testutil.Skipf(t, "g++ not installed: %v", err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "vbase.cc"), filepath.Join(dir, "vbase")
	if err := os.WriteFile(src, []byte(vbaseSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := dwarf.Load(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, size, _ := strings.Cut(line, " ")
		want, _ := strconv.ParseInt(size, 10, 64)
		ts := spec.Lookup(name)
		if len(ts) != 1 {
			t.Fatalf("%s: %d types", name, len(ts))
		}
		if got, _ := types.Sizeof(ts[0]); got != want {
			t.Errorf("sizeof(%s) = %d, the compiler says %d", name, got, want)
		}
	}
	checkAgainstGDB(t, spec, bin, map[string][]string{"A": nil, "B": {"A"}, "C": {"A"}, "D": nil})
}

// TestVirtualBaseReal: the C++ program over Boost (real::Named and
// real::Weighted share a virtual real::Entity) and libstdc++'s debug file
// (iostreams' virtual std::basic_ios) load whole, with gdb's layouts.
func TestVirtualBaseReal(t *testing.T) {
	t.Run("cpp-real", func(t *testing.T) {
		bin := testutil.Fixture(t, "cpp-real").Path
		spec, err := dwarf.Load(bin, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstGDB(t, spec, bin, map[string][]string{
			"real::Named":    {"real::Entity"},
			"real::Weighted": {"real::Entity"},
			"real::Item":     nil,
		})
	})
	t.Run("libstdc++", func(t *testing.T) {
		bin := testutil.RealBinary(t, "libstdc++")
		spec, err := dwarf.Load(bin, nil)
		if err != nil {
			t.Fatal(err)
		}
		const ch = "<char, std::char_traits<char> >"
		checkAgainstGDB(t, spec, bin, map[string][]string{
			"std::basic_istream" + ch:  {"std::basic_ios" + ch},
			"std::basic_ostream" + ch:  {"std::basic_ios" + ch},
			"std::basic_iostream" + ch: nil,
			"std::basic_ios" + ch:      nil,
		})
	})
}

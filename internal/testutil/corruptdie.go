package testutil

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dieSource is a C program of one unit with several types and functions
// (gcc -g -O0 emits its pointer types between the subprograms).
const dieSource = `struct alpha { int a; long b; char c; };
struct beta { struct alpha al; double d; short s; };
union gamma { int i; float f; struct beta *bp; };
enum delta { D0, D1 = 5, D2 };
struct epsilon { enum delta e; union gamma g; struct epsilon *next; };
typedef struct zeta { char z[7]; struct alpha *pa; } zeta_t;
struct eta { zeta_t zz; int k; };
struct theta { struct eta et; unsigned char u; };
int f_alpha(struct alpha *p) { return p->a + (int)p->b; }
double f_beta(struct beta *p, int k) { return p->d * k + p->s; }
int f_gamma(union gamma g) { return g.i; }
int f_eps(struct epsilon *e) { return e->e + f_gamma(e->g); }
int f_zeta(zeta_t *z) { return z->z[0]; }
int f_eta(struct eta *e) { return e->k + f_zeta(&e->zz); }
int f_theta(struct theta *t, long n) { return t->u + (int)n + f_eta(&t->et); }
int main(void) { struct theta t = {0}; return f_theta(&t, 1); }
`

// DIEDamage is a copy of a program with one DIE of .debug_info damaged:
// its abbreviation code made 0x7f, a code no table of the unit holds, so
// that a reader cannot tell where the DIE ends. Offsets are in
// .debug_info, read by debug/dwarf from the program.
type DIEDamage struct {
	Name      string
	Good, Bad string // the program, and its damaged copy
	Off       uint64 // the DIE damaged
	// From and To are the DIEs a reader keeping what it can loses: from
	// the child of the unit DIE that holds the one damaged (or is it) to
	// that child's DW_AT_sibling, or to the unit's end when it has none.
	From, To uint64
	// Theirs is debug/dwarf's error reading the damaged copy's unit.
	Theirs error
}

// CorruptDIEs builds dieSource with gcc -g -O0 and writes two damaged
// copies: "subprogram", the subprogram of f_gamma damaged (a child of the
// unit DIE: the rest of the unit is lost); "member", the second member of
// struct epsilon damaged (the struct has a DW_AT_sibling: that struct
// alone is lost). Each copy is checked against the outside readers:
// debug/dwarf stops at the DIE, readelf names it, llvm-dwarfdump prints
// the DIEs before it and none after.
func CorruptDIEs(t testing.TB) []DIEDamage {
	t.Helper()
	b := buildDIEs(t, "gcc", "die.c", dieSource)
	var out []DIEDamage
	for _, k := range b.kids {
		switch {
		case k.Tag == dwarf.TagSubprogram && k.Val(dwarf.AttrName) == "f_gamma":
			out = append(out, DIEDamage{Name: "subprogram", Off: uint64(k.Offset), From: uint64(k.Offset), To: b.end})
		case k.Tag == dwarf.TagStructType && k.Val(dwarf.AttrName) == "epsilon":
			out = append(out, secondMember(t, b, k, "member"))
		}
	}
	if len(out) != 2 {
		t.Fatalf("%s: %d of the DIEs to damage found in the unit at %#x", b.prog, len(out), b.unit)
	}
	for i := range out {
		b.damage(t, &out[i])
	}
	return out
}

// nsSource is a C++ program whose types and functions are in a namespace.
const nsSource = `namespace ns {
struct alpha { int a; long b; char c; };
struct beta { alpha al; double d; short s; };
struct epsilon { int e; beta b; epsilon *next; };
struct zeta { char z[7]; alpha *pa; };
struct eta { zeta zz; int k; };
int f_alpha(alpha *p) { return p->a + (int)p->b; }
double f_beta(beta *p, int k) { return p->d * k + p->s; }
int f_eps(epsilon *e) { return e->e + f_alpha(&e->b.al); }
int f_zeta(zeta *z) { return z->z[0]; }
int f_eta(eta *e) { return e->k + f_zeta(&e->zz); }
}
int main() { ns::eta e = {}; ns::beta b = {}; ns::epsilon x = {}; return ns::f_eta(&e) + (int)ns::f_beta(&b, 2) + ns::f_eps(&x); }
`

// CorruptNamespaceDIE builds nsSource with g++ -g -O0 and writes a copy
// with the second member of ns::epsilon damaged: the struct (a child of
// the namespace, with a DW_AT_sibling) is lost, not the namespace. The
// copy is checked as CorruptDIEs checks its.
func CorruptNamespaceDIE(t testing.TB) DIEDamage {
	t.Helper()
	b := buildDIEs(t, "g++", "ns.cc", nsSource)
	for _, k := range b.kids {
		if k.Tag != dwarf.TagNamespace || k.Val(dwarf.AttrName) != "ns" {
			continue
		}
		r := b.d.Reader()
		r.Seek(k.Offset)
		r.Next()
		for e, err := r.Next(); e != nil && err == nil && e.Tag != 0; e, err = r.Next() {
			if e.Tag == dwarf.TagStructType && e.Val(dwarf.AttrName) == "epsilon" {
				dd := secondMember(t, b, e, "namespace-member")
				b.damage(t, &dd)
				return dd
			}
			r.SkipChildren()
		}
	}
	t.Fatalf("%s: no struct ns::epsilon", b.prog)
	return DIEDamage{}
}

// dieProgram is a program CorruptDIEs damages copies of.
type dieProgram struct {
	dir, prog string
	good      []byte
	info      uint64 // the file offset of .debug_info
	d         *dwarf.Data
	unit      dwarf.Offset
	end       uint64         // the unit's end
	kids      []*dwarf.Entry // the children of its unit DIE
}

// buildDIEs builds source, written to file, with compiler -g -O0.
func buildDIEs(t testing.TB, compiler, file, source string) *dieProgram {
	t.Helper()
	b := &dieProgram{dir: t.TempDir()}
	src := filepath.Join(b.dir, file)
	b.prog = strings.TrimSuffix(src, filepath.Ext(src))
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(compiler, "-g", "-O0", "-o", b.prog, src).CombinedOutput(); err != nil {
		Skipf(t, "%s: %v %s", compiler, err, out)
	}
	good, ef, d := ReadDWARF(t, b.prog)
	info := ef.Section(".debug_info")
	if info == nil || info.Flags&elf.SHF_COMPRESSED != 0 || ef.ByteOrder != binary.LittleEndian {
		t.Fatalf("%s: want a plain little-endian .debug_info", b.prog)
	}
	b.good, b.info, b.d = good, info.Offset, d
	b.unit, b.end, b.kids = unitChildren(t, d, good[info.Offset:info.Offset+info.Size], src)
	return b
}

// secondMember is the damage named name of the second member of the
// struct k, which has a sibling: the struct is lost.
func secondMember(t testing.TB, b *dieProgram, k *dwarf.Entry, name string) DIEDamage {
	t.Helper()
	sib, ok := k.Val(dwarf.AttrSibling).(dwarf.Offset)
	r := b.d.Reader()
	r.Seek(k.Offset)
	r.Next()
	r.Next()
	m, err := r.Next()
	if !ok || err != nil || m == nil || m.Tag != dwarf.TagMember {
		t.Fatalf("%s: struct at %#x: no sibling or second member (%v)", b.prog, k.Offset, err)
	}
	return DIEDamage{Name: name, Off: uint64(m.Offset), From: uint64(k.Offset), To: uint64(sib)}
}

// damage writes the copy of b with dd's DIE damaged, and checks it with
// debug/dwarf, readelf and llvm-dwarfdump.
func (b *dieProgram) damage(t testing.TB, dd *DIEDamage) {
	t.Helper()
	at := b.info + dd.Off
	if b.good[at] == 0 || b.good[at] >= 0x7f {
		t.Fatalf("%s: the DIE at %#x has no one-byte code below 0x7f", b.prog, dd.Off)
	}
	bad := bytes.Clone(b.good)
	bad[at] = 0x7f
	dd.Good, dd.Bad = b.prog, filepath.Join(b.dir, "bad-"+dd.Name)
	if err := os.WriteFile(dd.Bad, bad, 0o755); err != nil {
		t.Fatal(err)
	}
	// debug/dwarf names the offset after the code it read.
	dd.Theirs = readUnit(bad, uint64(b.unit))
	var de dwarf.DecodeError
	if !errors.As(dd.Theirs, &de) || uint64(de.Offset) != dd.Off+1 {
		t.Fatalf("%s: debug/dwarf reads the damaged DIE at %#x: %v", dd.Bad, dd.Off, dd.Theirs)
	}
	out, _ := exec.Command("readelf", "--debug-dump=info", dd.Bad).CombinedOutput()
	if w := fmt.Sprintf("DIE at offset %#x refers to abbreviation number 127 which does not exist", dd.Off); !bytes.Contains(out, []byte(w)) {
		t.Fatalf("readelf --debug-dump=info %s does not say %q", dd.Bad, w)
	}
	dumpedBefore(t, b.d, *dd)
}

// unitChildren is the unit of d named name: its offset, its end (read
// from the unit headers of sec, the bytes of .debug_info), and the
// children of its unit DIE.
func unitChildren(t testing.TB, d *dwarf.Data, sec []byte, name string) (dwarf.Offset, uint64, []*dwarf.Entry) {
	t.Helper()
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			t.Fatalf("no unit %s (%v)", name, err)
		}
		if cu.Val(dwarf.AttrName) != name {
			r.SkipChildren()
			continue
		}
		var kids []*dwarf.Entry
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				t.Fatalf("unit %s ends inside its children (%v)", name, err)
			}
			if e.Tag == 0 {
				break
			}
			kids = append(kids, e)
			r.SkipChildren()
		}
		for pos := uint64(0); pos+4 <= uint64(len(sec)); {
			end := pos + 4 + uint64(binary.LittleEndian.Uint32(sec[pos:]))
			if pos < uint64(cu.Offset) && uint64(cu.Offset) < end {
				return cu.Offset, end, kids
			}
			pos = end
		}
		t.Fatalf("no unit header before the unit DIE at %#x", cu.Offset)
	}
}

// Lost reports whether the DIE at off is one of those a reader keeping
// what it can loses.
func (dd DIEDamage) Lost(off dwarf.Offset) bool {
	return uint64(off) >= dd.From && uint64(off) < dd.To
}

// TypeDIEs are the DIEs of d that converting the type at off reads (as
// debug/dwarf reads them): its DIE and its children's, and through
// DW_AT_type those of the types they name, and theirs.
func TypeDIEs(t testing.TB, d *dwarf.Data, off dwarf.Offset) []dwarf.Offset {
	t.Helper()
	seen := map[dwarf.Offset]bool{}
	var out []dwarf.Offset
	todo := []dwarf.Offset{off}
	for len(todo) > 0 {
		at := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[at] {
			continue
		}
		seen[at] = true
		r := d.Reader()
		r.Seek(at)
		for depth := 0; ; {
			e, err := r.Next()
			if err != nil || e == nil {
				t.Fatalf("the DIEs at %#x: %v", at, err)
			}
			if e.Tag == 0 {
				depth--
			} else {
				out = append(out, e.Offset)
				if ref, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
					todo = append(todo, ref)
				}
				if e.Children {
					depth++
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return out
}

// dumpedBefore checks that llvm-dwarfdump prints of dd.Bad the DIEs
// before the one damaged, as debug/dwarf reads them from dd.Good, and
// none after (null entries aside).
func dumpedBefore(t testing.TB, d *dwarf.Data, dd DIEDamage) {
	t.Helper()
	out, err := exec.Command("llvm-dwarfdump", "--debug-info", dd.Bad).Output()
	if err != nil {
		Skipf(t, "llvm-dwarfdump: %v", err)
	}
	var theirs []uint64
	for _, l := range strings.Split(string(out), "\n") {
		off, what, ok := strings.Cut(l, ":")
		if what = strings.TrimSpace(what); what == "NULL" || strings.HasPrefix(what, "Compile Unit") {
			continue // null entries (debug/dwarf gives no offset) and unit headers
		}
		if ok && strings.HasPrefix(off, "0x") {
			if v, err := strconv.ParseUint(off[2:], 16, 64); err == nil {
				theirs = append(theirs, v)
			}
		}
	}
	var ours []uint64
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil && (e.Tag == 0 || uint64(e.Offset) < dd.Off); e, err = r.Next() {
		if e.Tag != 0 {
			ours = append(ours, uint64(e.Offset))
		}
	}
	if !slices.Equal(theirs, ours) || len(ours) < 10 {
		t.Fatalf("llvm-dwarfdump prints the DIEs at %#x of %s; debug/dwarf reads those before %#x at %#x", theirs, dd.Bad, dd.Off, ours)
	}
}

// EachCorruptDIE runs f as a subtest on each of CorruptDIEs' copies, with
// debug/dwarf's reading of the undamaged program, under a cache of the
// test's own.
func EachCorruptDIE(t *testing.T, f func(t *testing.T, dd DIEDamage, d *dwarf.Data)) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, dd := range CorruptDIEs(t) {
		t.Run(dd.Name, func(t *testing.T) {
			_, _, d := ReadDWARF(t, dd.Good)
			f(t, dd, d)
		})
	}
}

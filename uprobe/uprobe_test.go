package uprobe

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/spec"
)

// fixture is a program built from source for the tests, with the
// definitions whose sites they move around.
type fixture struct {
	name string
	defs []string
	bin  string
}

// build builds the fixtures: C at -O2 and -O3 (GCC's .cold pieces, a
// lock-prefixed first instruction, CET's endbr64, AVX code) and Go.
func build(t *testing.T) []fixture {
	t.Helper()
	root, dir := testutil.Root(t), t.TempDir()
	gcc := func(name, src string, flags ...string) fixture {
		bin := filepath.Join(dir, name)
		args := append(append([]string{"-g"}, flags...), "-o", bin, filepath.Join(root, src))
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
		return fixture{name: name, bin: bin}
	}
	lock := gcc("lock", "uprobe/testdata/lock.c", "-O2", "-fcf-protection=none")
	lock.defs = []string{"f x", "f%return $retval", "main"}
	count := gcc("count", "probe/testdata/count/part.c", "-O3")
	count.defs = []string{"maybe_alloc i n", "first%return $retval", "third i", "note i n"}
	cet := gcc("cet", "probe/testdata/cet/cet.c", "-O2", "-fcf-protection=full")
	cet.defs = []string{"f", "main", "f%return"}
	vex := gcc("vex", "probe/testdata/vex/vex.c", "-O2", "-mavx2")
	vex.defs = []string{"main", "main%return"}
	goBin := filepath.Join(dir, "reenter")
	cmd := exec.Command("go", "build", "-o", goBin, ".")
	cmd.Dir = filepath.Join(root, "probe", "testdata", "reenter")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	goFix := fixture{name: "reenter", bin: goBin, defs: []string{"main.(*acc).add v", "main.deep", "main.big%return", "main.huge"}}
	return []fixture{lock, count, cet, vex, goFix}
}

// resolve resolves defs against bin's DWARF.
func resolve(t *testing.T, bin string, defs []string) *spec.Spec {
	t.Helper()
	df, err := dwarf.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { df.Close() })
	r, err := probe.NewResolver(df)
	if err != nil {
		t.Fatal(err)
	}
	var ds []*probe.Def
	for _, d := range defs {
		pd, err := probe.Parse(d)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, pd)
	}
	s, err := r.Spec(ds)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return s
}

func open(t *testing.T, bin string) *Code {
	t.Helper()
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	c, err := Open(ef)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestSweepMatchesObjdump: the instruction starts the proof finds in
// every function of the fixtures and of glibc are objdump's, exactly.
func TestSweepMatchesObjdump(t *testing.T) {
	bins := []string{}
	for _, f := range build(t) {
		bins = append(bins, f.bin)
	}
	bins = append(bins, testutil.RealBinary(t, "libc"))
	total := 0
	for _, bin := range bins {
		starts := testutil.InstructionStarts(t, bin)
		c := open(t, bin)
		m, err := code.NewFromELF(c.ef)
		if err != nil {
			t.Fatal(err)
		}
		var proven, unproven, insns int
		for _, fn := range m.Funcs() {
			if fn.Size == 0 || fn.LowPC == 0 {
				continue
			}
			p := c.pieceAt(fn.LowPC)
			if p == nil || p.lo != fn.LowPC {
				continue
			}
			if p.err != "" {
				unproven++
				continue
			}
			proven++
			ours := map[uint64]bool{}
			for _, a := range p.starts {
				ours[a] = true
				insns++
				if !starts[a] {
					t.Errorf("%s: %s: %#x starts an instruction here, not in objdump's disassembly", filepath.Base(bin), fn.Name, a)
				}
			}
			for a := p.lo; a < p.hi; a++ {
				if starts[a] && !ours[a] {
					t.Errorf("%s: %s: objdump starts an instruction at %#x, the sweep does not", filepath.Base(bin), fn.Name, a)
					break
				}
			}
		}
		t.Logf("%s: %d functions proven (%d instructions, each objdump's), %d not", filepath.Base(bin), proven, insns, unproven)
		if proven < 3 || unproven*20 > proven {
			t.Errorf("%s: %d functions proven, %d not", bin, proven, unproven)
		}
		total += insns
	}
	if total < 200000 {
		t.Errorf("only %d instructions compared", total)
	}
}

// TestShiftedSitesRefused moves every site the fixtures' definitions
// resolve to 1 to 15 bytes further (and glibc's malloc, free and
// fopen): each moved site is refused, or kept at an address where objdump
// starts an instruction the kernel accepts (the shift reached the next
// instruction). An address inside an instruction is always refused.
func TestShiftedSitesRefused(t *testing.T) {
	fixtures := append(build(t), fixture{name: "libc", bin: testutil.RealBinary(t, "libc"), defs: []string{"malloc", "free%return", "fopen"}})
	var refused, kept, inside int
	for _, f := range fixtures {
		starts := testutil.InstructionStarts(t, f.bin)
		s := resolve(t, f.bin, f.defs)
		c := open(t, f.bin)
		for _, p := range s.Probes {
			for _, site := range p.Sites {
				for d := uint64(1); d <= 15; d++ {
					moved := site
					moved.Addr, moved.FileOffset = site.Addr+d, site.FileOffset+d
					one := *s
					one.Probes = []spec.Probe{p}
					one.Probes[0].Sites = []spec.Site{moved}
					out, refs := c.Check(&one)
					if !starts[moved.Addr] {
						inside++
					}
					if len(refs) == 1 && len(out.Probes[0].Sites) == 0 {
						refused++
						continue
					}
					got := out.Probes[0].Sites[0]
					kept++
					if !starts[moved.Addr] {
						t.Errorf("%s: %s: %#x (%s+%d) is inside an instruction (objdump), and was kept at %#x", f.name, p.Def, moved.Addr, site.Kind, d, got.Addr)
					}
					b, err := c.ef.Code(got.Addr, 16)
					if err != nil || !starts[got.Addr] || x86.Refusal(b) != "" {
						t.Errorf("%s: %s: kept at %#x, which objdump does not start an instruction at or the kernel refuses", f.name, p.Def, got.Addr)
					}
				}
			}
		}
	}
	t.Logf("%d shifted sites: %d refused, %d kept on a boundary; %d were inside an instruction", refused+kept, refused, kept, inside)
	if refused+kept < 300 || inside < 200 {
		t.Errorf("too few shifted sites: %d (%d inside an instruction)", refused+kept, inside)
	}
}

// TestLockEntryMoves: f starts with a lock-prefixed add (objdump says
// so): its entry site moves to the next instruction, where x (RDI) is
// still readable; the site as resolved was on the refused instruction.
func TestLockEntryMoves(t *testing.T) {
	var lock fixture
	for _, f := range build(t) {
		if f.name == "lock" {
			lock = f
		}
	}
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "--disassemble=f", lock.bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	re := regexp.MustCompile(`(?m)^\s+([0-9a-f]+):\t(\S+)`)
	ins := re.FindAllStringSubmatch(string(out), 2)
	if len(ins) < 2 || ins[0][2] != "lock" {
		t.Fatalf("f does not start with a lock-prefixed instruction:\n%s", out)
	}
	first, _ := strconv.ParseUint(ins[0][1], 16, 64)
	second, _ := strconv.ParseUint(ins[1][1], 16, 64)
	s := resolve(t, lock.bin, []string{"f x"})
	if a := s.Probes[0].Sites[0].Addr; a != first {
		t.Fatalf("f's entry site resolved at %#x, not its first instruction %#x", a, first)
	}
	got, refs := open(t, lock.bin).Check(s)
	if len(refs) != 0 {
		t.Fatalf("refused: %v", refs)
	}
	site := got.Probes[0].Sites[0]
	if site.Addr != second || site.FileOffset != s.Probes[0].Sites[0].FileOffset+(second-first) {
		t.Errorf("moved to %#x (file offset %#x), want %#x", site.Addr, site.FileOffset, second)
	}
	if site.Args[0].Unavailable != "" || !strings.Contains(site.Note, "lock") {
		t.Errorf("x at the moved site: %q; note %q", site.Args[0].Unavailable, site.Note)
	}
}

// TestMoveKeepsOneHitPerCall: of three functions starting with a
// lock-prefixed add (testdata/moves.S), only the one whose next
// instruction no branch reaches has its entry moved there; a loop back
// to it, or a jump back from the function's .cold piece, refuses it. A
// function with its jump table in its code is not proven at all.
func TestMoveKeepsOneHitPerCall(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.c")
	src := "long f_ok(long), f_loop(long), f_cold(long), f_table(long);\nint main(void) { return (int)(f_ok(1) + f_loop(3) + f_cold(-2) + f_table(1)); }\n"
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "moves")
	if out, err := exec.Command("gcc", "-o", bin, main, filepath.Join(testutil.Root(t), "uprobe", "testdata", "moves.S")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	c := open(t, bin)
	m, err := code.NewFromELF(c.ef)
	if err != nil {
		t.Fatal(err)
	}
	s := &spec.Spec{Arch: "x86_64"}
	for _, name := range []string{"f_ok", "f_loop", "f_cold", "f_table"} {
		fns := m.Lookup(name)
		if len(fns) != 1 {
			t.Fatalf("%s: %d functions", name, len(fns))
		}
		off, err := c.ef.FileOffset(fns[0].LowPC)
		if err != nil {
			t.Fatal(err)
		}
		s.Probes = append(s.Probes, spec.Probe{Def: name, Function: name, Lang: "c",
			Sites: []spec.Site{{Kind: spec.SiteEntry, Function: name, Addr: fns[0].LowPC, FileOffset: off}}})
	}
	out, refs := c.Check(s)
	if got := out.Probes[0].Sites; len(got) != 1 || got[0].Addr != s.Probes[0].Sites[0].Addr+9 {
		t.Errorf("f_ok: %+v, want its entry moved 9 bytes past the lock addq", got)
	}
	why := map[string]string{}
	for _, r := range refs {
		why[r.Def] = r.Why
	}
	for _, name := range []string{"f_loop", "f_cold"} {
		if !strings.Contains(why[name], "branch target") {
			t.Errorf("%s: refused for %q, want its next instruction named a branch target", name, why[name])
		}
	}
	if !strings.Contains(why["f_table"], "cannot be decoded") {
		t.Errorf("f_table, its jump table in its code: refused for %q, want its code undecodable", why["f_table"])
	}
	if len(refs) != 3 {
		t.Errorf("%d refusals: %v", len(refs), refs)
	}
}

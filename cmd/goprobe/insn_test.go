package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// buildLock builds uprobe/testdata/lock.c, whose f starts with a
// lock-prefixed add (objdump's disassembly is checked to say so).
func buildLock(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lock")
	src := filepath.Join(testutil.Root(t), "uprobe", "testdata", "lock.c")
	if out, err := exec.Command("gcc", "-O2", "-g", "-fcf-protection=none", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	startsWithLock(t, bin, "f")
	return bin
}

// startsWithLock fails the test unless objdump's disassembly of sym in
// bin starts with a lock-prefixed instruction.
func startsWithLock(t *testing.T, bin, sym string) {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "--disassemble="+sym, bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	if m := regexp.MustCompile(`(?m)^\s+[0-9a-f]+:\t(\S+)`).FindStringSubmatch(string(out)); m == nil || m[1] != "lock" {
		t.Fatalf("%s does not start with a lock-prefixed instruction:\n%s", sym, out)
	}
}

// statCounts runs goprobe stat --json and returns each probe's count and
// the program's output.
func statCounts(t *testing.T, args ...string) (map[string]int, string) {
	t.Helper()
	code, out, errs := runGoprobe(append([]string{"stat", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("goprobe stat %v: exit %d: %s", args, code, errs)
	}
	return statOf(t, out)
}

// statVsProgram runs goprobe stat --json fn on bin with arg, and returns
// the calls of fn the program itself counted ("fn calls N" in its output)
// and goprobe's count.
func statVsProgram(t *testing.T, fn, bin, arg string) (program, stat int) {
	t.Helper()
	code, out, errs := runGoprobe("stat", "--json", fn, "--", bin, arg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(regexp.QuoteMeta(fn) + ` calls (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count from the program: %s", out)
	}
	program, _ = strconv.Atoi(m[1])
	n, _ := statOf(t, out)
	return program, n[fn]
}

// statOf reads stat --json's counts by probe from out, and returns the
// program's output before them.
func statOf(t *testing.T, out string) (map[string]int, string) {
	t.Helper()
	var got struct {
		Probes []struct {
			Probe string
			Count int
		}
	}
	i := strings.Index(out, `{"probes"`)
	if i < 0 {
		t.Fatalf("no counts: %s", out)
	}
	if err := json.Unmarshal([]byte(out[i:]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	n := map[string]int{}
	for _, p := range got.Probes {
		n[p.Probe] = p.Count
	}
	return n, out[:i]
}

// TestStatLockEntry: the kernel refuses a uprobe on f's first instruction
// (lock addq), silently for a process that starts after the attach; the
// entry probe moves to the next instruction and counts every call, as the
// program counts them itself, and reads x there as the program passed it.
func TestStatLockEntry(t *testing.T) {
	needBPF(t)
	bin := buildLock(t)
	n, out := statCounts(t, "f", "f%return", "--", bin, "100")
	if !strings.Contains(out, "calls f=100 ") {
		t.Fatalf("the program's own count: %s", out)
	}
	if n["f"] != 100 || n["f%return"] != 100 {
		t.Errorf("counted f %d, f%%return %d; the program made 100 calls", n["f"], n["f%return"])
	}
	// The artifacts name the moved site, never the refused instruction.
	starts, first := testutil.InstructionStarts(t, bin), fnStart(t, bin)
	for _, format := range []string{"spec", "perf"} {
		code, art, errs := runGoprobe("gen", "--format="+format, "-x", bin, "f", "f%return")
		if code != 0 {
			t.Fatalf("gen --format=%s: %s", format, errs)
		}
		addrs := artifactOffsets(t, bin, format, art)
		for _, a := range addrs {
			if !starts[a] || a == first {
				t.Errorf("gen --format=%s names %#x: not an instruction start, or f's lock addq", format, a)
			}
		}
		if len(addrs) != 2 {
			t.Errorf("gen --format=%s names %d sites, want f's moved entry and its return", format, len(addrs))
		}
	}
	events, _ := traced(t, "f x", "--", bin, "4")
	var xs []string
	for _, e := range events {
		xs = append(xs, e[strings.Index(e, "map["):])
	}
	if got := strings.Join(xs, " "); got != "map[x:0] map[x:1] map[x:2] map[x:3]" {
		t.Errorf("x read at f's moved entry: %s", got)
	}
}

// fnStart is the address of f's first instruction in bin.
func fnStart(t *testing.T, bin string) uint64 {
	t.Helper()
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == "f" {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol f", bin)
	return 0
}

// TestStatLockEntryRust: the same with Rust, whose AtomicU64::fetch_add
// at the top of f is a lock incq.
func TestStatLockEntryRust(t *testing.T) {
	needBPF(t)
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		testutil.Skipf(t, "rustc not installed: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "lock_rs")
	src := filepath.Join(testutil.Root(t), "uprobe", "testdata", "lock.rs")
	if out, err := exec.Command(rustc, "-O", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("rustc: %v\n%s", err, out)
	}
	out, err := exec.Command("nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sym := regexp.MustCompile(`\s(_ZN4lock1f17h[0-9a-f]+E)\n`).FindSubmatch(out)
	if sym == nil {
		t.Fatalf("no symbol of lock::f:\n%s", out)
	}
	startsWithLock(t, bin, string(sym[1]))
	n, said := statCounts(t, "lock::f", "lock::f%return", "--", bin, "100")
	if !strings.Contains(said, "calls f=100 ") {
		t.Fatalf("the program's own count: %s", said)
	}
	if n["lock::f"] != 100 || n["lock::f%return"] != 100 {
		t.Errorf("counted lock::f %d, %%return %d; the program made 100 calls", n["lock::f"], n["lock::f%return"])
	}
}

// TestShiftedSpecNeverAttached: every site of a spec made for the lock
// fixture and for a Go program is moved 1 to 12 bytes on and run through
// goprobe stat --spec. A site inside an instruction (objdump says where
// they start) is refused with one line naming it, before anything
// attaches and before the program starts; any site kept starts an
// instruction, and the program's output is then byte for byte its own.
func TestShiftedSpecNeverAttached(t *testing.T) {
	needBPF(t)
	lock := buildLock(t)
	goBin := buildCount(t, "go")
	cases := []struct {
		bin  string
		defs []string
		run  []string
	}{
		{lock, []string{"f", "f%return", "main"}, []string{"3"}},
		{goBin, []string{"main.work", "main.work%return"}, nil},
	}
	var refused, ran int
	for _, c := range cases {
		plain, err := exec.Command(c.bin, c.run...).Output()
		if err != nil {
			t.Fatal(err)
		}
		code, js, errs := runGoprobe(append([]string{"gen", "--format=spec", "-x", c.bin}, c.defs...)...)
		if code != 0 {
			t.Fatalf("gen: %s", errs)
		}
		s, err := spec.ReadSpec(strings.NewReader(js), "spec")
		if err != nil {
			t.Fatal(err)
		}
		starts := testutil.InstructionStarts(t, c.bin)
		for pi := range s.Probes {
			for si, site := range s.Probes[pi].Sites {
				for d := uint64(1); d <= 12; d++ {
					one := *s
					one.Probes = []spec.Probe{s.Probes[pi]}
					one.Probes[0].Sites = []spec.Site{site}
					one.Probes[0].Sites[0].Addr += d
					one.Probes[0].Sites[0].FileOffset += d
					var b bytes.Buffer
					if err := spec.WriteSpec(&b, &one); err != nil {
						t.Fatal(err)
					}
					file := filepath.Join(t.TempDir(), fmt.Sprintf("shift%d.json", d))
					if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					addr := site.Addr + d
					code, out, errs := runGoprobe(append([]string{"stat", "--spec", file, "--"}, append([]string{c.bin}, c.run...)...)...)
					refusal := code != 0 && out == "" && strings.Count(errs, "\n") == 1 && strings.Contains(errs, fmt.Sprintf("site at %#x", addr))
					switch {
					case !starts[addr] && !refusal:
						t.Errorf("%s site %d+%d (%#x, inside an instruction): exit %d, stdout %q, stderr %q", one.Probes[0].Def, si, d, addr, code, out, errs)
					case !starts[addr]:
						refused++
					case refusal: // an instruction start, but not proven one (past the function's end)
					case code != 0 || !strings.HasPrefix(out, string(plain)):
						t.Errorf("%s site %d+%d (%#x, an instruction start): exit %d, output %q, want %q first; %s", one.Probes[0].Def, si, d, addr, code, out, plain, errs)
					default:
						ran++
					}
				}
			}
		}
	}
	t.Logf("%d shifted sites inside an instruction refused; %d on an instruction start ran", refused, ran)
	if refused < 40 || ran < 4 {
		t.Errorf("only %d shifted sites inside an instruction refused, %d on a start ran", refused, ran)
	}
}

// TestCgoStrippedNeverCorrupted: the program of issue 28, a loop calling a
// noinline function, built with cgo, external linking and -s -w (only
// .gopclntab names its functions): probed, its output stays byte for
// byte its own: the probe counts every call, or is refused with one line
// when its address is not proven; never does it land inside an
// instruction. The generated artifacts likewise name proven addresses or
// nothing.
func TestCgoStrippedNeverCorrupted(t *testing.T) {
	needBPF(t)
	dir := t.TempDir()
	src := `package main

import (
	"fmt"
	"os"
	"strconv"
)

import "C"

//go:noinline
func work(i int) int { return i*7 + 3 }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	total := 0
	for i := 0; i < n; i++ {
		total += work(i)
	}
	fmt.Println("total", total, "calls", n)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module app\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "app")
	cmd := exec.Command("go", "build", "-ldflags=-s -w -linkmode=external", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	plain, err := exec.Command(bin, "1000").Output()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runGoprobe("stat", "main.work", "--", bin, "1000")
	switch {
	case code == 0:
		if !strings.HasPrefix(out, string(plain)) || !regexp.MustCompile(`main\.work\s+1000\s`).MatchString(out) {
			t.Errorf("probed: output %q, want %q and 1000 calls counted; %s", out, plain, errs)
		}
	case out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "refused"):
		t.Errorf("exit %d: stdout %q, stderr %q: want the program's output or one line refusing the site", code, out, errs)
	}
	starts := testutil.InstructionStarts(t, bin)
	for _, format := range []string{"spec", "bpftrace", "perf"} {
		code, art, errs := runGoprobe("gen", "--format="+format, "-x", bin, "main.work")
		if code != 0 { // refused, or not expressible in the format: no artifact at all
			if art != "" {
				t.Errorf("gen --format=%s: exit %d with an artifact: %s", format, code, errs)
			}
			continue
		}
		for _, a := range artifactOffsets(t, bin, format, art) {
			if !starts[a] {
				t.Errorf("gen --format=%s names %#x, inside an instruction", format, a)
			}
		}
	}
}

// artifactOffsets are the addresses an artifact names: a spec's addr
// fields; the file offsets of perf probe commands and bpftrace probes,
// turned into addresses.
func artifactOffsets(t *testing.T, bin, format, art string) []uint64 {
	t.Helper()
	if format == "spec" {
		s, err := spec.ReadSpec(strings.NewReader(art), "spec")
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, p := range s.Probes {
			for _, site := range p.Sites {
				out = append(out, site.Addr)
			}
		}
		return out
	}
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var out []uint64
	for _, m := range regexp.MustCompile(`(?:=|uprobe:[^:\s]+:)0x([0-9a-f]+)`).FindAllStringSubmatch(art, -1) {
		off, _ := strconv.ParseUint(m[1], 16, 64)
		a, err := ef.VirtualAddress(off)
		if err != nil {
			t.Fatalf("%s names file offset %#x: %v", format, off, err)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		t.Errorf("gen --format=%s named no file offset:\n%s", format, art)
	}
	return out
}

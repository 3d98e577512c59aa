package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestProfileDeepStack: a program spinning at the bottom of a recursion 100
// calls deep, for 1.5 s of its CPU time however loaded the machine, says
// so ("depth=100"); the profile's stacks hold all of it:
// 101 frames of down() under main, below the 127-frame bound (at 32 the
// stacks were cut at 30 of them), and none is counted truncated.
func TestProfileDeepStack(t *testing.T) {
	needBPF(t)
	bin := buildDeep(t)
	folded := filepath.Join(t.TempDir(), "deep.folded")
	code, out, errs := runGoprobe("profile", "-F", "499", "--top", "0", "--folded", folded, "--", bin, "100")
	if code != 0 || !strings.Contains(out+errs, "depth=100") {
		t.Fatalf("exit %d; the program did not report its depth:\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, " 0 truncated at 127 frames") {
		t.Errorf("stacks truncated:\n%s", errs)
	}
	stacks, counts := readFolded(t, folded)
	var whole, all uint64
	for i, s := range stacks {
		downs := 0
		for _, f := range s {
			if f == "down" {
				downs++
			}
		}
		all += counts[i]
		if downs == 101 && strings.Contains(strings.Join(s, ";"), "main;down") {
			whole += counts[i]
		}
	}
	if all < 100 || whole < all*8/10 {
		t.Errorf("%d of %d samples hold the 101 frames of down() under main\n%s", whole, all, errs)
	}
}

// buildDeep builds probe/testdata/profile/deep.c: a recursion as deep as
// its argument, which prints where main is and its depth.
func buildDeep(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	return buildWith(t, dir, "gcc", "-O2", "-g", "-o", "BIN", filepath.Join(dir, "deep.c"))
}

// gdbFrame is one frame of gdb's backtrace.
type gdbFrame struct {
	Name string
	Addr uint64 // 0 for frame #0 (gdb prints no address there)
	File string
	Line int
}

// gdbBacktrace runs bin with args under gdb (which turns address space
// randomization off) to a breakpoint on fn and returns its backtrace,
// innermost first, down to main (gdb's default end).
func gdbBacktrace(t *testing.T, bin, fn string, args ...string) []gdbFrame {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	out, err := exec.Command("gdb", append([]string{"-batch", "-ex", "set pagination off", "-ex", "break " + fn, "-ex", "run", "-ex", "bt", "-ex", "kill", "-args", bin}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	frame := regexp.MustCompile(`^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(.*\) at (\S+):(\d+)$`)
	var fs []gdbFrame
	for _, l := range strings.Split(string(out), "\n") {
		if m := frame.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(fs) {
				t.Fatalf("gdb frame #%s after %d frames:\n%s", m[1], len(fs), out)
			}
			f := gdbFrame{Name: m[3], File: m[4]}
			f.Addr, _ = strconv.ParseUint(m[2], 0, 64)
			f.Line, _ = strconv.Atoi(m[5])
			fs = append(fs, f)
		}
	}
	return fs
}

// traceStack runs trace --json --stack with extra flags on bin and
// returns the one event's stack, and the program's output.
func traceStack(t *testing.T, bin, arg string, flags ...string) (stack []string, stdout, stderr string) {
	t.Helper()
	args := append(append([]string{"trace", "--json", "--stack"}, flags...), "spin", "--", bin, arg)
	code, out, errs := runGoprobe(args...)
	if code != 0 || !strings.Contains(out, "depth="+arg) {
		t.Fatalf("exit %d; the program did not report its depth:\n%s\n%s", code, out, errs)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			var ev struct{ Stack []string }
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatal(err)
			}
			if got != nil {
				t.Fatalf("two events: %s", out)
			}
			got = ev.Stack
		}
	}
	return got, out, errs
}

// TestTraceStackDeep: trace --stack at the bottom of a recursion the
// program counts itself (depth=N) prints the frames gdb's backtrace shows
// at the same point, in order: spin, N+1 frames of down, main (then libc's
// start, below gdb's end). At N = 100 all of them; at N = 200 the first
// 127 (perf's default depth), the stack counted truncated.
func TestTraceStackDeep(t *testing.T) {
	needBPF(t)
	bin := buildDeep(t)
	for _, depth := range []int{100, 200} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			var want []string
			for _, f := range gdbBacktrace(t, bin, "spin", fmt.Sprint(depth)) {
				want = append(want, f.Name)
			}
			if len(want) != depth+3 {
				t.Fatalf("gdb's backtrace has %d frames, want %d: %v", len(want), depth+3, want)
			}
			got, _, errs := traceStack(t, bin, fmt.Sprint(depth))
			n := min(len(want), 127)
			if depth > 127 {
				if len(got) != 127 {
					t.Errorf("%d frames printed, want 127 (the depth bound)", len(got))
				}
				if !strings.Contains(errs, "1 stacks truncated at 127 frames") {
					t.Errorf("the truncation is not reported:\n%s", errs)
				}
			} else if len(got) < n+1 || got[n] != "__libc_start_call_main" {
				t.Errorf("%d frames printed, want gdb's %d and libc's below main", len(got), n)
			}
			if len(got) < n || strings.Join(got[:n], " ") != strings.Join(want[:n], " ") {
				t.Errorf("frames differ from gdb's backtrace:\n got %v\nwant %v", got, want[:n])
			}
		})
	}
}

// TestTraceStackFormats: --stack-depth 6 prints 6 frames and counts the
// stack truncated; each --stack-format agrees with gdb's backtrace at the
// same point of the same program, from the first return address on (gdb
// stops spin past its prologue, the probe at its entry): lines gives
// gdb's file:line; raw gdb's addresses, each run's counted from where the
// program says main is; build-id the file's build-id (readelf) and
// offsets that addr2line, through the program headers, names as gdb
// does, at gdb's lines.
func TestTraceStackFormats(t *testing.T) {
	needBPF(t)
	bin := buildDeep(t)
	const n = 6
	want := gdbBacktrace(t, bin, "spin", "10")[1:n]
	mainAt := regexp.MustCompile(`main=(0x[0-9a-f]+)`)
	var gdbMain, runMain uint64
	run := func(format string) []string {
		got, out, errs := traceStack(t, bin, "10", "--stack-depth", fmt.Sprint(n), "--stack-format", format)
		if len(got) != n || !strings.Contains(errs, fmt.Sprintf("1 stacks truncated at %d frames", n)) {
			t.Fatalf("--stack-format %s: %d frames, want %d, and the truncation reported: %v\n%s", format, len(got), n, got, errs)
		}
		m := mainAt.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the program did not say where main is:\n%s", out)
		}
		runMain, _ = strconv.ParseUint(m[1], 0, 64)
		return got[1:]
	}
	for i, l := range run("lines") {
		if w := fmt.Sprintf("%s %s:%d", want[i].Name, want[i].File, want[i].Line); l != w {
			t.Errorf("lines: frame %d is %q, gdb %q", i+1, l, w)
		}
	}
	gdbMain = gdbMainAddr(t, bin)
	for i, l := range run("raw") {
		if a, _ := strconv.ParseUint(l, 0, 64); a-runMain != want[i].Addr-gdbMain {
			t.Errorf("raw: frame %d is %s (main%+d), gdb %#x (main%+d)", i+1, l, int64(a-runMain), want[i].Addr, int64(want[i].Addr-gdbMain))
		}
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	id := readelfBuildID(t, bin)
	var offs []uint64
	for i, l := range run("build-id") {
		h, off, ok := strings.Cut(l, "+")
		v, err := strconv.ParseUint(off, 0, 64)
		if !ok || err != nil || h != id {
			t.Fatalf("build-id: frame %d is %q, want %s+OFFSET", i+1, l, id)
		}
		offs = append(offs, v-1) // the call, before the return address
	}
	var addrs []uint64
	for _, o := range offs {
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD && o >= p.Off && o < p.Off+p.Filesz {
				addrs = append(addrs, o-p.Off+p.Vaddr)
			}
		}
	}
	a2l := testutil.Addr2Line(t, bin, addrs)
	if len(a2l) != len(want) {
		t.Fatalf("%d offsets placed in the file, want %d", len(a2l), len(want))
	}
	for i, c := range a2l {
		outer := c[len(c)-1]
		if outer.Func != want[i].Name || outer.Line != want[i].Line {
			t.Errorf("build-id: frame %d at offset %#x is %s:%d by addr2line, gdb %s:%d", i+1, offs[i]+1, outer.Func, outer.Line, want[i].Name, want[i].Line)
		}
	}
}

// gdbMainAddr is where gdb's run of bin has main.
func gdbMainAddr(t *testing.T, bin string) uint64 {
	t.Helper()
	out, err := exec.Command("gdb", "-batch", "-ex", "break spin", "-ex", "run", "-ex", "info address main", "-ex", "kill", "-args", bin, "1").CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Symbol "main" is a function at address (0x[0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("gdb did not say where main is:\n%s", out)
	}
	a, _ := strconv.ParseUint(string(m[1]), 0, 64)
	return a
}

// readelfBuildID is the GNU build-id readelf -n reads from bin.
func readelfBuildID(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", bin).Output()
	if err != nil {
		t.Fatalf("readelf -n: %v", err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("readelf -n %s: no build-id\n%s", bin, out)
	}
	return string(m[1])
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// buildCPU builds probe/testdata/profile's program in lang: main -> outer
// -> inner, burning CPU for the seconds it is given.
func buildCPU(t *testing.T, lang string) string {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	switch lang {
	case "c":
		return buildWith(t, dir, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(dir, "cpu.c"))
	case "rust":
		return buildWith(t, dir, "rustc", "-C", "opt-level=3", "-g", "-o", "BIN", filepath.Join(dir, "cpu.rs"))
	}
	bin := filepath.Join(t.TempDir(), "cpu")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(dir, "go")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// readFolded parses folded stacks: frames (kernel frames dropped, and the
// inline expansions after the last real call: code inlined into the leaf
// function is its own) and counts.
func readFolded(t *testing.T, path string) (stacks [][]string, counts []uint64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseUint(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("bad folded line %q", line)
		}
		var frames []string
		leaf := 0
		for _, fr := range strings.Split(line[:i], ";") {
			if strings.HasSuffix(fr, "_[k]") {
				continue
			}
			if !strings.HasSuffix(fr, "_[i]") {
				leaf = len(frames) + 1
			}
			frames = append(frames, strings.TrimSuffix(fr, "_[i]"))
		}
		frames = frames[:leaf]
		stacks, counts = append(stacks, frames), append(counts, n)
	}
	return stacks, counts
}

// TestProfileStacks: CPU-bound programs whose time goes to main -> outer
// -> inner (C without frame pointers, a Rust release build, Go), each
// running for 1.5 s of its own CPU time (so a loaded machine only
// stretches the run), are profiled: about 749 samples at 499 Hz; at least 80% of the samples carry that whole stack, ending in
// inner, and the stacks reach the program's entry (the C and Rust ones
// through the C library's tables); a program a shell runs as its child is
// profiled as well.
func TestProfileStacks(t *testing.T) {
	needBPF(t)
	for _, c := range []struct {
		lang  string
		chain []string
		root  string
		shell bool // run by a shell, as its child
	}{
		{"c", []string{"main", "outer", "inner"}, "_start", false},
		{"c", []string{"main", "outer", "inner"}, "_start", true},
		{"rust", []string{"cpu::main", "cpu::outer", "cpu::inner"}, "_start", false},
		{"go", []string{"main.main", "main.outer", "main.inner"}, "runtime.goexit", false},
	} {
		name := c.lang
		if c.shell {
			name += "-child"
		}
		t.Run(name, func(t *testing.T) {
			bin := buildCPU(t, c.lang)
			folded := filepath.Join(t.TempDir(), "folded")
			svg := filepath.Join(t.TempDir(), "svg")
			cmd := []string{bin, "1.5"}
			if c.shell {
				// Not the shell's last command, so it forks for it.
				cmd = []string{"sh", "-c", bin + " 1.5; true"}
			}
			code, out, errs := runGoprobe(append([]string{"profile", "-F", "499", "--folded", folded, "--svg", svg, "--"}, cmd...)...)
			if code != 0 {
				t.Fatalf("goprobe profile: exit %d: %s", code, errs)
			}
			if !strings.Contains(out, "calls ") {
				t.Errorf("the program's output is missing: %q", out)
			}
			stacks, counts := readFolded(t, folded)
			var total, whole, rooted uint64
			for i, s := range stacks {
				total += counts[i]
				if len(s) >= 3 && strings.Join(s[len(s)-3:], ";") == strings.Join(c.chain, ";") {
					whole += counts[i]
				}
				if len(s) > 0 && s[0] == c.root {
					rooted += counts[i]
				}
			}
			t.Logf("%d samples, %d with %v, %d from %s; %s", total, whole, c.chain, rooted, c.root, errs)
			// 1.5 s of CPU time at 499 Hz, however loaded the machine.
			if total < 600 {
				t.Fatalf("only %d samples in 1.5 s of the program's CPU time at 499 Hz (749 expected)", total)
			}
			if whole*100 < total*80 {
				t.Errorf("%d of %d samples end in %v (want 80%%)", whole, total, c.chain)
			}
			if rooted*100 < total*80 {
				t.Errorf("%d of %d samples start at %s (want 80%%)", rooted, total, c.root)
			}
			if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), c.chain[2]) {
				t.Errorf("the flame graph does not show %s (%v)", c.chain[2], err)
			}
		})
	}
}

// TestStatStacks: malloc in the C library (no debug info, no frame
// pointers in the program) counted per stack: the program's two callers
// show with the numbers of calls it reports, and only the command's calls
// count, not another process's.
func TestStatStacks(t *testing.T) {
	needBPF(t)
	bin, libc := buildAlloc(t), cLibrary(t)
	// Another process allocating meanwhile is not the command's: its
	// calls are not counted.
	other := exec.Command(bin, "200", "2")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	code, out, errs := runGoprobe("stat", "--json", "--stacks", "-x", libc, "malloc", "--", bin, "25")
	if code != 0 {
		t.Fatalf("goprobe stat --stacks: exit %d: %s", code, errs)
	}
	var here, there int
	if _, err := fmt.Sscanf(out[strings.Index(out, "here "):], "here %d there %d", &here, &there); err != nil {
		t.Fatalf("the program's report is missing: %q", out)
	}
	var got struct {
		Probes []struct {
			Count  uint64
			Stacks []struct {
				Count  uint64
				Frames []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The command's calls, and printf's buffer.
	if c := got.Probes[0].Count; c < uint64(here+there) || c > uint64(here+there)+2 {
		t.Errorf("malloc counted %d times; the command calls it %d times", c, here+there)
	}
	counts := map[string]uint64{}
	for _, s := range got.Probes[0].Stacks {
		// The C library's debug info, when installed, names the
		// function __libc_malloc, of which malloc is an alias.
		if len(s.Frames) >= 3 && strings.HasSuffix(s.Frames[0], "malloc") {
			counts[strings.Join(s.Frames[1:3], ";")] += s.Count
		}
	}
	if counts["here;main"] != uint64(here) || counts["there;main"] != uint64(there) {
		t.Errorf("malloc from here;main %d times, from there;main %d; the program says %d and %d\n%s",
			counts["here;main"], counts["there;main"], here, there, out)
	}
}

// TestTraceStack: each event of trace --stack carries its user stack:
// here's 25 calls come from main, through a binary without frame
// pointers.
func TestTraceStack(t *testing.T) {
	needBPF(t)
	bin := buildAlloc(t)
	code, out, errs := runGoprobe("trace", "--json", "--stack", "here n", "--", bin, "25")
	if code != 0 {
		t.Fatalf("goprobe trace --stack: exit %d: %s", code, errs)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{`) {
			continue
		}
		var e struct {
			Args  map[string]any
			Stack []string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if len(e.Stack) < 3 || e.Stack[0] != "here" || e.Stack[1] != "main" || e.Stack[len(e.Stack)-1] != "_start" {
			t.Errorf("stack %v", e.Stack)
		}
		if want := float64(16 + n); e.Args["n"] != want {
			t.Errorf("event %d: n = %v, want %v", n, e.Args["n"], want)
		}
		n++
	}
	if n != 25 {
		t.Errorf("%d events, want 25\n%s", n, out)
	}
}

// TestProcessLibrary: with -p and no -x, a function the executable does
// not have is found in a library the process maps (malloc in the C
// library), the probe counts the process's calls, and goprobe ends when
// the process does.
func TestProcessLibrary(t *testing.T) {
	needBPF(t)
	bin := buildAlloc(t)
	cmd := exec.Command(bin, "60", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	// Once the loader mapped the C library (before, malloc is only the
	// loader's own), the probes attach while the program runs; the count
	// is what came after.
	for i := 0; i < 200; i++ {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
		if strings.Contains(string(b), "libc.so.6") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	code, out, errs := runGoprobe("stat", "-p", strconv.Itoa(cmd.Process.Pid), "malloc")
	if code != 0 {
		t.Fatalf("goprobe stat -p: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "libc.so.6") {
		t.Errorf("malloc not found in the C library: %s", errs)
	}
	var c uint64
	for _, l := range strings.Split(out, "\n") {
		if fs := strings.Fields(l); len(fs) == 4 && fs[0] == "malloc" {
			c, _ = strconv.ParseUint(fs[1], 10, 64)
		}
	}
	if c == 0 || c > 60+120+5 {
		t.Errorf("%d calls of malloc; the program makes 180 (and one for printf)\n%s", c, out)
	}
}

// TestStatStacksChild: the command's child (a shell runs the program)
// gets its unwind tables once the programs find it: its later calls all
// carry their whole stack.
func TestStatStacksChild(t *testing.T) {
	needBPF(t)
	bin, libc := buildAlloc(t), cLibrary(t)
	code, out, errs := runGoprobe("stat", "--json", "--stacks", "-x", libc, "malloc", "--", "sh", "-c", bin+" 25 5; true")
	if code != 0 {
		t.Fatalf("goprobe stat --stacks: exit %d: %s", code, errs)
	}
	var got struct {
		Probes []struct {
			Stacks []struct {
				Count  uint64
				Frames []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	counts := map[string]uint64{}
	for _, s := range got.Probes[0].Stacks {
		if len(s.Frames) >= 3 && strings.HasSuffix(s.Frames[0], "malloc") {
			counts[strings.Join(s.Frames[1:3], ";")] += s.Count
		}
	}
	// here's calls are 5 ms apart: those before the first refresh
	// (20 ms) may unwind by frame pointer; there's all come later.
	if counts["there;main"] != 50 || counts["here;main"] < 15 {
		t.Errorf("malloc from here;main %d times (of 25), from there;main %d (of 50)\n%s", counts["here;main"], counts["there;main"], out)
	}
}

// buildAlloc builds probe/testdata/profile/alloc.c without frame
// pointers.
func buildAlloc(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	return buildWith(t, dir, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(dir, "alloc.c"))
}

// cLibrary is the C library's path.
func cLibrary(t *testing.T) string {
	t.Helper()
	libc := "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		testutil.Skipf(t, "%s: %v", libc, err)
	}
	return libc
}

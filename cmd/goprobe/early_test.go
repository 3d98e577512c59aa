package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// statStacksJSON is stat --stacks --json's output.
type statStacksJSON struct {
	Probes []struct {
		Probe  string
		Count  uint64
		Stacks []struct {
			Count  uint64
			Frames []string
		}
	}
	NoTable       uint64 `json:"no_table"`
	NoTableFrames uint64 `json:"no_table_frames"`
}

func statStacks(t *testing.T, args ...string) (statStacksJSON, string) {
	t.Helper()
	code, out, errs := runGoprobe(append([]string{"stat", "--json", "--stacks"}, args...)...)
	if code != 0 {
		t.Fatalf("goprobe stat --stacks %v: exit %d: %s", args, code, errs)
	}
	var got statStacksJSON
	i := strings.Index(out, `{"probes"`)
	if i < 0 {
		t.Fatalf("no JSON in %q", out)
	}
	if err := json.Unmarshal([]byte(out[i:]), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got, out
}

// relative names bin by a path relative to the working directory, as a
// user in the program's directory would (./prog).
func relative(t *testing.T, bin string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, bin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rel, "/") {
		rel = "./" + rel
	}
	return rel
}

// TestStacksFromFirstInstruction: the hits a program makes in its first
// millisecond (main -> mid -> leaf, 2000 times) all carry their whole
// stack: for a C program without frame pointers (leaf itself, and malloc
// in the C library, which has no frame pointers either) and for Go (at a
// function's entry the frame pointer still points at the caller's
// caller). The command is named by a relative path, as from its
// directory. No stack needed the frame-pointer fallback.
func TestStacksFromFirstInstruction(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "early")
	cbin := buildWith(t, dir, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(dir, "early.c"))
	gobin := filepath.Join(t.TempDir(), "early")
	cmd := exec.Command("go", "build", "-o", gobin, ".")
	cmd.Dir = filepath.Join(dir, "go")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	libc := cLibrary(t)
	for _, tc := range []struct {
		name  string
		args  []string
		chain []string // innermost first
	}{
		{"c leaf", []string{"leaf", "--", relative(t, cbin)}, []string{"leaf", "mid", "main"}},
		{"c malloc", []string{"-x", libc, "malloc", "--", relative(t, cbin)}, []string{"malloc", "leaf", "mid", "main"}},
		{"c malloc absolute", []string{"-x", libc, "malloc", "--", cbin}, []string{"malloc", "leaf", "mid", "main"}},
		{"go", []string{"main.leaf", "--", relative(t, gobin)}, []string{"main.leaf", "main.mid", "main.main"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := 0; round < 3; round++ {
				got, out := statStacks(t, tc.args...)
				m := regexp.MustCompile(`leaf (\d+)`).FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("the program's report is missing: %s", out)
				}
				calls, _ := strconv.ParseUint(m[1], 10, 64)
				var whole, other uint64
				var bad []string
				for _, s := range got.Probes[0].Stacks {
					// The C library's debug info, when installed, names
					// malloc __libc_malloc.
					if len(s.Frames) > 0 && strings.HasSuffix(s.Frames[0], "malloc") {
						s.Frames[0] = "malloc"
					}
					if len(s.Frames) >= len(tc.chain) && strings.Join(s.Frames[:len(tc.chain)], ";") == strings.Join(tc.chain, ";") {
						whole += s.Count
						continue
					}
					other += s.Count
					bad = append(bad, fmt.Sprintf("%d %s", s.Count, strings.Join(s.Frames, ";")))
				}
				// Other mallocs: printf's buffer, once.
				if whole != calls || tc.chain[0] != "malloc" && other != 0 || other > 1 || got.NoTable != 0 {
					t.Fatalf("round %d: %d of the program's %d calls with the whole stack %v; %d stacks without a table; others:\n%s",
						round, whole, calls, tc.chain, got.NoTable, strings.Join(bad, "\n"))
				}
			}
		})
	}
}

// TestStatConstructor: a library's constructor runs before the program's
// entry point; its malloc is counted with the program's own, as perf
// counts them (perf probe on the C library's malloc, perf stat on the
// command), and its stack goes through the constructor.
func TestStatConstructor(t *testing.T) {
	needBPF(t)
	libc := cLibrary(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "early", "ctor")
	lib := buildWith(t, dir, "gcc", "-O2", "-g", "-shared", "-fPIC", "-o", "BIN", filepath.Join(dir, "lib.c"))
	so := filepath.Join(filepath.Dir(lib), "libctor.so")
	if err := os.Rename(lib, so); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(filepath.Dir(so), "prog")
	if out, err := exec.Command("gcc", "-O2", "-g", "-o", prog, filepath.Join(dir, "main.c"), "-L"+filepath.Dir(so), "-lctor", "-Wl,-rpath,$ORIGIN").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	got, out := statStacks(t, "-x", libc, "malloc", "--", prog, "7")
	m := regexp.MustCompile(`mallocs (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the program's report is missing: %s", out)
	}
	said, _ := strconv.ParseUint(m[1], 10, 64)
	if got.Probes[0].Count != said {
		t.Errorf("malloc counted %d times; the program made %d calls (one in its library's constructor)\n%s", got.Probes[0].Count, said, out)
	}
	ctor := false
	for _, s := range got.Probes[0].Stacks {
		if len(s.Frames) >= 2 && s.Frames[1] == "init" {
			ctor = true
		}
	}
	if !ctor {
		t.Errorf("no stack through the constructor:\n%s", out)
	}
	if n := perfCount(t, libc, "malloc", prog, "7"); n != got.Probes[0].Count {
		t.Errorf("perf counts %d calls of malloc, goprobe %d", n, got.Probes[0].Count)
	}
	// A real program: ls under a shell, whose libraries' constructors
	// allocate too. The shell allocates per environment variable and
	// perf adds its own to the command's: env -i gives both the same.
	ls := []string{"env", "-i", "sh", "-c", "exec ls -la / >/dev/null"}
	code, out, errs := runGoprobe(append([]string{"stat", "--json", "-x", libc, "malloc", "--"}, ls...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var st struct{ Probes []struct{ Count uint64 } }
	if err := json.Unmarshal([]byte(out[strings.Index(out, `{"probes"`):]), &st); err != nil {
		t.Fatal(err)
	}
	if n := perfCount(t, libc, "malloc", ls...); n != st.Probes[0].Count {
		t.Errorf("%v: perf counts %d calls of malloc, goprobe %d", ls, n, st.Probes[0].Count)
	}
}

// perfCount counts the calls of fn in lib that a command makes, with perf
// probe and perf stat; it removes its probe after.
func perfCount(t *testing.T, lib, fn string, cmd ...string) uint64 {
	t.Helper()
	perf, err := exec.LookPath("perf")
	if err != nil {
		testutil.Skipf(t, "perf not installed: %v", err)
	}
	if _, err := os.Stat("/sys/kernel/tracing/uprobe_events"); err != nil {
		exec.Command("mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing").Run()
	}
	event := "probe_binscope:" + fn
	exec.Command(perf, "probe", "-q", "-d", event).Run()
	if out, err := exec.Command(perf, "probe", "-q", "-x", lib, "-a", "probe_binscope:"+fn+"="+fn).CombinedOutput(); err != nil {
		testutil.Skipf(t, "perf probe: %v %s", err, out)
	}
	defer exec.Command(perf, "probe", "-q", "-d", event).Run()
	c := exec.Command(perf, append([]string{"stat", "-x,", "-e", event, "--"}, cmd...)...)
	var errb strings.Builder
	c.Stderr = &errb
	if err := c.Run(); err != nil {
		t.Fatalf("perf stat: %v %s", err, errb.String())
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if fs := strings.Split(l, ","); len(fs) > 2 && strings.Contains(l, event) {
			n, err := strconv.ParseUint(fs[0], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("perf stat printed no count: %s", errb.String())
	return 0
}

// TestNoTableReported: a program whose unwind tables were removed
// unwinds by frame pointer, which it does not keep: every stack-taking
// command counts the stacks that went through code without a table and
// says so.
func TestNoTableReported(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "early")
	strip := func(bin string) string {
		out := bin + ".notable"
		if b, err := exec.Command("objcopy", "--remove-section=.eh_frame", "--remove-section=.eh_frame_hdr", "--remove-section=.debug_frame", bin, out).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v %s", err, b)
		}
		return out
	}
	bin := strip(buildWith(t, dir, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(dir, "early.c")))
	got, _ := statStacks(t, "leaf", "--", bin, "100")
	if got.NoTable != 100 || got.NoTableFrames < 100 {
		t.Errorf("stat --stacks --json: %d stacks (%d frames) without a table; want all 100", got.NoTable, got.NoTableFrames)
	}
	note := regexp.MustCompile(`(\d+) of (\d+) stacks had frames without an unwind table \(\d+ frames, followed by frame pointer: callers may be missing\)`)
	code, out, errs := runGoprobe("stat", "--stacks", "leaf", "--", bin, "100")
	if m := note.FindStringSubmatch(out); code != 0 || m == nil || m[1] != "100" || m[2] != "100" {
		t.Errorf("stat --stacks: exit %d, no note of the stacks without a table:\n%s%s", code, out, errs)
	}
	code, out, errs = runGoprobe("trace", "--stack", "leaf", "--", bin, "100")
	if m := note.FindStringSubmatch(errs); code != 0 || m == nil || m[1] != "100" || m[2] != "100" {
		t.Errorf("trace --stack: exit %d, no note of the stacks without a table:\n%s", code, errs)
	}
	cpu := strip(buildCPU(t, "c"))
	code, _, errs = runGoprobe("profile", "-F", "199", "--top", "0", "--", cpu, "1")
	m := regexp.MustCompile(`(\d+) frames without a table \(frame pointer\) in (\d+) stacks`).FindStringSubmatch(errs)
	if code != 0 || m == nil || m[2] == "0" {
		t.Errorf("profile: exit %d, no count of the stacks without a table:\n%s", code, errs)
	}
}

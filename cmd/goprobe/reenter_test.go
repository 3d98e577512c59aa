package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// buildReenter builds probe/testdata/reenter and returns it with the
// source line of each of its functions' declarations.
func buildReenter(t *testing.T) (string, map[string]int) {
	t.Helper()
	return buildReenterWith(t, "")
}

// buildReenterWith is buildReenter with a toolchain (a GOTOOLCHAIN value;
// "" for the go command's own).
func buildReenterWith(t *testing.T, toolchain string) (string, map[string]int) {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "reenter")
	bin := filepath.Join(t.TempDir(), "reenter")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if toolchain != "" {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+toolchain)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for i, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^func (\w+)\(`).FindStringSubmatch(l); m != nil {
			lines[m[1]] = i + 1
		}
	}
	return bin, lines
}

// said is the program's own count of each function's calls.
func said(t *testing.T, out string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`calls add=(\d+) deep=(\d+) big=(\d+) huge=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the program printed no counts:\n%s", out)
	}
	n := map[string]int{}
	for i, f := range []string{"add", "deep", "big", "huge"} {
		n[f], _ = strconv.Atoi(m[i+1])
	}
	return n
}

// TestStatReentry: a Go function's entry probe sits on its stack check's
// branch, which runs again when the function starts over after morestack
// (a stack growth, a preemption request); every probe counts each call
// once. The program counts its own calls: 200,000 calls of a method in a
// loop (preemption requests), and goroutines recursing deep enough to
// grow their stacks through functions with each shape of the check (a
// small, a large, a huge frame). Entry probes, %return probes, the line of
// a declaration, and the capture a %return probe keeps from the entry all
// agree with the program. Built by the go command's own Go (the goroutine
// in R14) and by go1.16.15 (its check loads the goroutine from
// thread-local storage first; a huge frame's has two branches to
// morestack).
func TestStatReentry(t *testing.T) {
	needBPF(t)
	for _, tc := range []string{"", "go1.16.15"} {
		bin, line := buildReenterWith(t, tc)
		for _, run := range [][]string{{"loop", "200000"}, {"grow", "8", "2000"}} {
			t.Run(tc+run[0], func(t *testing.T) { statReentry(t, bin, line, run) })
		}
	}
}

// statReentry is TestStatReentry's run of bin with the arguments run.
func statReentry(t *testing.T, bin string, line map[string]int, run []string) {
	defs := map[string]string{
		"main.(*acc).add": "add", "main.deep": "deep", "main.big": "big", "main.huge": "huge",
		"main.(*acc).add%return": "add", "main.huge%return": "huge",
		fmt.Sprintf("main.go:%d", line["big"]): "big",
		"main.(*acc).add%return v":             "add", // keeps v from the entry
	}
	args := []string{"stat", "--json"}
	for d := range defs {
		args = append(args, d)
	}
	code, out, errs := runGoprobe(append(append(args, "--", bin), run...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := said(t, out)
	if want["add"] == 0 || run[0] == "grow" && want["huge"] == 0 {
		t.Fatalf("the program made no calls:\n%s", out)
	}
	var got struct {
		Probes []struct {
			Probe string
			Count int
		}
	}
	js := out[strings.Index(out, `{"probes"`):]
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if len(got.Probes) != len(defs) {
		t.Fatalf("%d probes counted, want %d:\n%s", len(got.Probes), len(defs), out)
	}
	for _, p := range got.Probes {
		if n := want[defs[p.Probe]]; p.Count != n {
			t.Errorf("%s counted %d; the program made %d calls", p.Probe, p.Count, n)
		}
	}
}

// TestTraceResults: every result of a Go function is read at %return, by
// position ($retval1), by its name in the source (err) or as rN when it
// has none, as $retval expands them, with field chains; an error prints
// its dynamic type (named from the linker's itab symbol) and data
// pointer. The program logs each call with its results (%T and %p of the
// error); the events say the same.
func TestTraceResults(t *testing.T) {
	needBPF(t)
	bin, _ := buildReenter(t)
	events, out := traced(t, "main.(*acc).add%return v n=a->n r=$retval0 err=$retval1",
		"main.(*acc).add%return $retval", "main.split%return v q s err t=err.tab",
		"main.split%return $retval", "--", bin, "loop", "12", "log")
	var said, saw []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "add ") || strings.HasPrefix(l, "split ") {
			said = append(said, l)
		}
	}
	tab := map[string]bool{} // the error's itab: one, and only when not nil
	for _, e := range events {
		m := regexp.MustCompile(`^(\S+)%return (.*) return 0x[0-9a-f]+ map\[(.*)\]$`).FindStringSubmatch(e)
		if m == nil {
			t.Fatalf("event %q", e)
		}
		kv := map[string]string{}
		for _, f := range regexp.MustCompile(`(\w+):(\S+)`).FindAllStringSubmatch(m[3], -1) {
			kv[f[1]] = f[2]
		}
		switch {
		case m[1] == "main.(*acc).add" && m[2] == "$retval":
			saw = append(saw, fmt.Sprintf("add r=%s err=%s", kv["r0"], kv["r1"]))
		case m[1] == "main.(*acc).add":
			saw = append(saw, fmt.Sprintf("add v=%s n=%s r=%s err=%s", kv["v"], kv["n"], kv["r"], kv["err"]))
		case m[2] == "$retval":
			saw = append(saw, fmt.Sprintf("split q=%s s=%q err=%s", kv["q"], kv["s"], kv["err"]))
		default:
			saw = append(saw, fmt.Sprintf("split v=%s q=%s s=%q err=%s", kv["v"], kv["q"], kv["s"], kv["err"]))
			tab[fmt.Sprintf("%v %s", kv["err"] == "nil", kv["t"])] = true
		}
	}
	// What $retval alone prints, from the program's lines.
	var want []string
	for _, l := range said {
		want = append(want, l)
		short := regexp.MustCompile(` v=\d+| n=\d+`).ReplaceAllString(l, "")
		want = append(want, short)
	}
	sort.Strings(want)
	sort.Strings(saw)
	if len(said) != 24 || strings.Join(saw, "\n") != strings.Join(want, "\n") {
		t.Errorf("the program said:\n%s\nthe probes read:\n%s", strings.Join(want, "\n"), strings.Join(saw, "\n"))
	}
	if len(tab) != 2 || !tab["true 0x0"] {
		t.Errorf("err.tab: %v; want 0 for nil and one itab otherwise", tab)
	}
}

// TestResolveMistakes: a misspelled field, parameter or result, or an
// access the type does not allow, is an error before anything is
// attached: one line naming the closest names, exit status 1.
func TestResolveMistakes(t *testing.T) {
	bin, _ := buildReenter(t)
	for _, tc := range []struct{ def, want string }{
		{"main.(*acc).add a->m", "main.acc has no field m (closest: n)"},
		{"main.(*acc).add%return a->nn", "main.acc has no field nn (closest: n)"},
		{"main.(*acc).add vv", "no parameter vv (closest: v"},
		{"main.split%return er", "no parameter er (closest: err"},
		{"main.split%return err.tabb", "runtime.iface has no field tabb (closest: tab"},
		{"main.split%return $retval2.tab->Typ", "has no field Typ (closest: Type"},
		{"main.split%return $retval3", "main.split has 3 results: $retval0 to $retval2"},
		{"main.split q", "q is a result of main.split: read it at main.split%return"},
		{"main.(*acc).add v->n", "int is not a pointer"},
		{"main.(*acc).add a.n", "is not a struct"},
	} {
		code, out, errs := runGoprobe("trace", "-x", bin, tc.def, "--", bin, "loop", "1")
		if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d, %q; want exit 1 and one line saying %q", tc.def, code, errs, tc.want)
		}
	}
}

// TestBpftraceReentry: the generated bpftrace script carries the stack
// check's guard as a predicate, and counts each call once too.
func TestBpftraceReentry(t *testing.T) {
	bin, _ := buildReenter(t)
	script, out := bpftraceRun(t, bin, "main.big", "grow 8 2000")
	if !strings.Contains(script, `/ (reg("flags") & 0x41) == 0 /`) {
		t.Fatalf("no guard:\n%s", script)
	}
	got := regexp.MustCompile(`@\[main\.big\]: (\d+)`).FindSubmatch(out)
	if got == nil {
		t.Fatalf("no count in:\n%s", out)
	}
	if n, want := string(got[1]), said(t, string(out))["big"]; n != strconv.Itoa(want) {
		t.Errorf("bpftrace counted %s calls of big; the program made %d", n, want)
	}
}

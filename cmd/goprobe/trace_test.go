package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// traced runs goprobe trace --json with args and returns its events
// without pid, tid and time, sorted, and the command's output.
func traced(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errs := runGoprobe(append([]string{"trace", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("goprobe trace %v: exit %d: %s", args, code, errs)
	}
	var events []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct {
			Probe, Site, Addr string
			Args              map[string]any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		events = append(events, fmt.Sprintf("%s %s %s %v", e.Probe, e.Site, e.Addr, e.Args))
	}
	sort.Strings(events)
	return events, out
}

func needBPF(t *testing.T) {
	t.Helper()
	cmdtest.NeedRoot(t)
}

// TestTraceSpecStripped: a spec made from the fixture traces a stripped
// copy (no symbols, no DWARF) with exactly the events tracing the original
// with its debug info gives; a binary of another build is refused.
func TestTraceSpecStripped(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "c")
	defs := []string{"maybe_alloc i n", "first%return $retval", "third i"}
	code, js, errs := runGoprobe(append([]string{"gen", "--format=spec", "-x", bin}, defs...)...)
	if code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	spec := filepath.Join(t.TempDir(), "count.spec.json")
	if err := os.WriteFile(spec, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	want, out := traced(t, append(defs, "--", bin, "5")...)
	if !strings.Contains(out, "maybe_alloc calls: 15") || len(want) != 15+5+5 {
		t.Fatalf("tracing the original: %d events\n%s", len(want), out)
	}
	// Each inlined call of maybe_alloc read the arguments the program passed.
	var said, read []string
	for _, m := range regexp.MustCompile(`called maybe_alloc\((\d+), (\d+)\)`).FindAllStringSubmatch(out, -1) {
		said = append(said, fmt.Sprintf("map[i:%s n:%s]", m[1], m[2]))
	}
	for _, e := range want {
		if strings.HasPrefix(e, "maybe_alloc i n inline ") {
			read = append(read, e[strings.Index(e, "map["):])
		}
	}
	sort.Strings(said)
	sort.Strings(read)
	if len(said) != 15 || strings.Join(said, " ") != strings.Join(read, " ") {
		t.Errorf("the program passed %v; the probes read %v", said, read)
	}
	got, _ := traced(t, "--spec", spec, "-x", stripped, "--", stripped, "5")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stripped copy traced with the spec:\n%s\nthe original:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	other := buildCount(t, "go")
	code, _, errs = runGoprobe("trace", "--spec", spec, "-x", other, "--", other)
	if code != 1 || !strings.Contains(errs, "build-id") || strings.Count(errs, "\n") != 1 {
		t.Errorf("another build: exit %d, %q", code, errs)
	}
}

// TestStatExitStatus: goprobe stat counts every call and exits with the
// command's status; the command's output is untouched.
func TestStatExitStatus(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "go")
	code, out, errs := runGoprobe("stat", "--json", "main.twice", "main.work", "--", bin, "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var said int
	if _, err := fmt.Sscanf(out[strings.Index(out, "twice calls:"):], "twice calls: %d", &said); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, fmt.Sprintf(`{"probe":"main.twice","count":%d,`, said)) || !strings.Contains(out, `{"probe":"main.work","count":1,`) {
		t.Errorf("the program made %d calls of twice and one of work:\n%s", said, out)
	}
	code, out, errs = runGoprobe("stat", "-x", bin, "main.work", "--", "sh", "-c", bin+" 1 && exit 7")
	if code != 7 || !strings.Contains(out, "twice calls:") {
		t.Errorf("exit status %d, want the command's 7: %s %s", code, out, errs)
	}
}

// TestTraceClientGolang: client_golang's counter and gauge methods traced
// at %return read the metric's name through desc->fqName and its value
// through the receiver kept from the entry (valBits as a float, valInt),
// and every update the program reports is seen with the value it reports;
// the program's output is what it prints untraced.
func TestTraceClientGolang(t *testing.T) {
	needBPF(t)
	traceClientGolang(t, testutil.Fixture(t, "go-prom").Path)
}

// traceClientGolang probes bin, a build of go-prom's program, on every
// update method and requires the values the program reports.
func traceClientGolang(t *testing.T, bin string) {
	t.Helper()
	b := struct{ Path string }{bin}
	const p = "github.com/prometheus/client_golang/prometheus."
	var defs []string
	for _, m := range []string{"Inc", "Add"} {
		defs = append(defs, p+"(*counter)."+m+"%return name=c->desc->fqName bits=c->valBits:f64 int=c->valInt")
	}
	for _, m := range []string{"Set", "Add", "Sub", "Inc", "Dec"} {
		defs = append(defs, p+"(*gauge)."+m+"%return name=g->desc->fqName bits=g->valBits:f64")
	}
	code, out, errs := runGoprobe(append(append([]string{"trace", "--json"}, defs...), "--", b.Path, "updates")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	plain, err := exec.Command(b.Path, "updates").Output()
	if err != nil {
		t.Fatal(err)
	}
	var said, saw []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "update "):
			f := strings.Fields(l)
			said = append(said, f[1]+" "+f[2]+" "+f[3])
		case strings.HasPrefix(l, `{"probe"`):
			var e struct {
				Probe string
				Args  struct {
					Name string
					Bits float64
					Int  *float64
				}
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatal(err)
			}
			v := e.Args.Bits
			if e.Args.Int != nil {
				v += *e.Args.Int
			}
			method := e.Probe[strings.Index(e.Probe, ").")+2 : strings.Index(e.Probe, "%")]
			saw = append(saw, fmt.Sprintf("%s %s %g", e.Args.Name, method, v))
		}
	}
	// main counts one request and sets the gauge to 2 before the updates.
	if len(saw) < 2 || saw[0] != "requests_total Inc 1" || saw[1] != "inflight Set 2" {
		t.Fatalf("the first events are not main's own: %q\n%s", saw, out)
	}
	if strings.Join(saw[2:], "\n") != strings.Join(said, "\n") || len(said) != 24 {
		t.Errorf("the program reported:\n%s\nthe probes saw:\n%s", strings.Join(said, "\n"), strings.Join(saw[2:], "\n"))
	}
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, `{"probe"`) {
			kept = append(kept, l)
		}
	}
	if strings.Join(kept, "\n") != strings.TrimSpace(string(plain)) {
		t.Errorf("traced output differs from the program's own:\n%s\n---\n%s", strings.Join(kept, "\n"), plain)
	}
}

// TestTraceInlinedGo: main.twice, inlined into work's loop and into main,
// fires once per call, and where its parameter is readable at the
// expansion's entry the value is the one the program says it passed.
func TestTraceInlinedGo(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "go")
	code, out, errs := runGoprobe("trace", "--json", "main.twice x", "--", bin, "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var passed []int
	var calls int
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "twice args: ["); ok {
			for _, f := range strings.Fields(strings.TrimSuffix(rest, "]")) {
				var x int
				fmt.Sscan(f, &x)
				passed = append(passed, x)
			}
		}
		fmt.Sscanf(l, "twice calls: %d", &calls)
	}
	var read []int
	hits := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		hits++
		var e struct{ Args struct{ X *int } }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Args.X != nil {
			read = append(read, *e.Args.X)
		}
	}
	if hits != calls || calls != len(passed) || calls == 0 {
		t.Fatalf("%d hits; the program made %d calls (%v)\n%s", hits, calls, passed, out)
	}
	// The loop's expansion has x in a register; main's has it optimised out.
	if len(read) < calls-1 || fmt.Sprint(read) != fmt.Sprint(passed[:len(read)]) {
		t.Errorf("read %v; the program passed %v", read, passed)
	}
}

// TestTraceReplaced: when the probed file is replaced on disk by another
// build (an upgrade), goprobe says so and re-attaches its probes to the new
// file; calls in processes started from the new file are traced with the
// arguments they were made with.
func TestTraceReplaced(t *testing.T) {
	needBPF(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(testutil.Root(t), "probe", "testdata", "replace", "slow.c")
	bin, next := filepath.Join(dir, "slow"), filepath.Join(dir, "slow.next")
	for _, b := range []struct {
		out  string
		args []string
	}{{bin, nil}, {next, []string{"-DVARIANT"}}} {
		if out, err := exec.Command(gcc, append([]string{"-O2", "-g", "-o", b.out, src}, b.args...)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v %s", err, out)
		}
	}
	// The old file runs, is replaced by renaming the new build over it,
	// and the new file runs once goprobe had time to notice.
	script := fmt.Sprintf("%s 10 && mv %s %s && sleep 1 && %s 20", bin, next, bin, bin)
	code, out, errs := runGoprobe("trace", "--json", "-x", bin, "f a", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "replaced on disk: probes re-attached") {
		t.Errorf("no word of the replacement: %s", errs)
	}
	var said, read []string
	for _, l := range strings.Split(out, "\n") {
		var a int
		if _, err := fmt.Sscanf(l, "f(%d)", &a); err == nil {
			said = append(said, fmt.Sprint(a))
		}
		if strings.HasPrefix(l, `{"probe"`) {
			var e struct{ Args struct{ A int } }
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatal(err)
			}
			read = append(read, fmt.Sprint(e.Args.A))
		}
	}
	sort.Strings(said)
	sort.Strings(read)
	if len(said) != 6 || strings.Join(said, " ") != strings.Join(read, " ") {
		t.Errorf("the programs called f with %v; the probes read %v\n%s\n%s", said, read, out, errs)
	}
}

// TestTraceWithoutDebugInfo: a C binary stripped of its debug info is
// probed by symbol, its arguments read by the calling convention's
// registers; a stripped Go binary by its .gopclntab and Go's registers.
func TestTraceWithoutDebugInfo(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "c")
	nodebug := bin + ".nodebug"
	if out, err := exec.Command("strip", "--strip-debug", "-o", nodebug, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	events, out := traced(t, "-x", nodebug, "third %rdi", "--", nodebug, "4")
	var said, got []string
	for _, m := range regexp.MustCompile(`called maybe_alloc\((\d+), 64\)`).FindAllStringSubmatch(out, -1) {
		var i int
		fmt.Sscan(m[1], &i)
		said = append(said, fmt.Sprintf("map[%%rdi:%d]", i-2)) // third(i) passes i+2 on
	}
	for _, e := range events {
		got = append(got, e[strings.Index(e, "map["):])
	}
	sort.Strings(said)
	sort.Strings(got)
	if len(said) != 4 || strings.Join(got, " ") != strings.Join(said, " ") {
		t.Errorf("the program called third with %v; the probes read %v", said, got)
	}
	code, _, errs := runGoprobe("gen", "-x", nodebug, "third i")
	if code != 1 || !strings.Contains(errs, "no debug info for third") {
		t.Errorf("a parameter name without debug info: exit %d, %q", code, errs)
	}

	gobin := buildCount(t, "go")
	stripped := gobin + ".stripped"
	if out, err := exec.Command("strip", "-o", stripped, gobin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	// work(n) receives n = 7 + len(os.Args) in RAX.
	events, _ = traced(t, "-x", stripped, "main.work %rax", "--", stripped, "a", "b")
	if len(events) != 1 || !strings.Contains(events[0], "map[%rax:10]") {
		t.Errorf("main.work in a stripped Go binary: %v", events)
	}
}

// TestStatFileLine: a FILE:LINE probe on the first line of an inlined
// function's body fires once per call, at every expansion: as many times as
// the C and Go fixtures say they called it.
func TestStatFileLine(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "count")
	for _, tc := range []struct {
		lang, file, marker string
		said               *regexp.Regexp
	}{
		{"c", "part.c", "__builtin_expect(cache", regexp.MustCompile(`maybe_alloc calls: (\d+)`)},
		{"go", "go/main.go", "if x%3 == 0", regexp.MustCompile(`twice calls: (\d+)`)},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			line := 0
			for i, l := range strings.Split(string(src), "\n") {
				if strings.Contains(l, tc.marker) {
					line = i + 1
				}
			}
			bin := buildCount(t, tc.lang)
			def := fmt.Sprintf("%s:%d", filepath.Base(tc.file), line)
			code, out, errs := runGoprobe("stat", "--json", def, "--", bin, "4")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			m := tc.said.FindStringSubmatch(out)
			if m == nil || !strings.Contains(out, fmt.Sprintf(`{"probe":"%s","count":%s,`, def, m[1])) {
				t.Errorf("%s should count the program's calls:\n%s", def, out)
			}
		})
	}
}

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCgoLinkModesCount: testdata/cgo-work (a cgo loop calling work and
// the inlined mix N times, then printing the total), built by Go 1.16
// (the oldest the tools read: see TestOldGoRefused), the newest Go the
// module registry serves, the machine's own and others between,
// linked internally, externally, as PIE and with -s -w: `goprobe stat`
// counts exactly N calls of each, and the program prints byte for byte
// what it prints unprobed.
func TestCgoLinkModesCount(t *testing.T) {
	needBPF(t)
	const n = 1000
	for _, tc := range testutil.GoToolchains {
		for _, mode := range testutil.GoLinkModes {
			bin := testutil.BuildCgoWork(t, tc, mode)
			want, err := exec.Command(bin, strconv.Itoa(n)).Output()
			if err != nil || len(want) < 2 {
				t.Fatalf("%s %s unprobed: %v %q", tc, mode, err, want)
			}
			code, out, errs := runGoprobe("stat", "main.work", "main.mix", "--", bin, strconv.Itoa(n))
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", tc, mode, code, errs)
			}
			rest, ok := strings.CutPrefix(out, string(want))
			if !ok || !strings.HasPrefix(rest, "PROBE ") {
				t.Errorf("%s %s: the program printed %q probed, %q unprobed", tc, mode, out, want)
			}
			if !regexp.MustCompile(`(?m)^main\.work\s+` + strconv.Itoa(n) + `\s+1\s+0$`).MatchString(rest) {
				t.Errorf("%s %s: want %d calls of main.work at 1 site:\n%s%s", tc, mode, n, errs, rest)
			}
			// mix is inlined into main, its out-of-line copy left out by
			// the linker: one site, the inline one (from DWARF, or without
			// it from the runtime's inline tree).
			if !regexp.MustCompile(`(?m)^main\.mix\s+` + strconv.Itoa(n) + `\s+1\s+0$`).MatchString(rest) {
				t.Errorf("%s %s: want %d calls of the inlined main.mix at its site:\n%s%s", tc, mode, n, errs, rest)
			}
		}
	}
}

// TestPrometheusServeHTTP: Debian's prometheus (go1.19, cgo, external
// linking, stripped) probed by -p while it serves: goprobe counts one
// net/http.serverHandler.ServeHTTP per request, the server's own
// prometheus_http_requests_total grows by the requests sent, and every
// response is the one it gave unprobed.
func TestPrometheusServeHTTP(t *testing.T) {
	needBPF(t)
	p := testutil.StartPrometheus(t, "global: {scrape_interval: 1h}\n", true)
	get := func(path string) string {
		t.Helper()
		code, body := p.Get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, code)
		}
		return body
	}
	const healthy = "/-/healthy 200"
	counter := func() int { return p.Requests(t)[healthy] }
	unprobed := get("/-/healthy")

	goprobe := buildGoprobe(t, t.TempDir())
	agent, stderr := startAgent(t, goprobe, "stat", "--listen", "127.0.0.1:0", "-p", strconv.Itoa(p.Cmd.Process.Pid),
		"--metric", "prom_serve_http_total", "net/http.serverHandler.ServeHTTP")
	before := counter()
	const n = 200
	for i := range n {
		if got := get("/-/healthy"); got != unprobed {
			t.Fatalf("request %d: probed response %q, unprobed %q", i, got, unprobed)
		}
	}
	after := counter()
	if after-before != n {
		t.Errorf("prometheus_http_requests_total{%s} grew by %d for %d requests", healthy, after-before, n)
	}
	// Each request goes through ServeHTTP once: n, and the two reads of
	// the server's /metrics.
	want := strconv.Itoa(n + 2)
	got := ""
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got = scrape(t, agent, "prom_serve_http_total"); got == want {
			break
		}
	}
	if got != want {
		t.Errorf("goprobe counted %s ServeHTTP calls, want %s:\n%s", got, want, stderr())
	}
}

// promtoolRules writes a rules file of k recording rules and returns
// promtool, the file, and what `promtool check rules FILE` prints unprobed.
func promtoolRules(t *testing.T, k int) (promtool, file, said string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testutil.Skipf(t, "promtool not installed (bash scripts/install-deps.sh): %v", err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: g\n    rules:\n")
	for i := range k {
		fmt.Fprintf(&rules, "      - record: job:r%d:sum\n        expr: sum by (job) (rate(http_requests_total{i=\"%d\"}[5m]))\n", i, i)
	}
	file = filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).Output()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("SUCCESS: %d rules found", k)) {
		t.Fatalf("promtool check rules unprobed: %v\n%s", err, out)
	}
	return promtool, file, string(out)
}

// promParse is the PromQL parser's entry, as .gopclntab names it.
const promParse = "github.com/prometheus/prometheus/promql/parser.ParseExpr"

// TestPromtoolParseExpr: `promtool check rules` on a file of k rules
// (Debian's promtool: go1.19, cgo, stripped) calls the PromQL parser's
// ParseExpr once per rule, and says every rule is fine as it does
// unprobed.
func TestPromtoolParseExpr(t *testing.T) {
	needBPF(t)
	const k = 7
	promtool, file, want := promtoolRules(t, k)
	code, out, errs := runGoprobe("stat", promParse, "--", promtool, "check", "rules", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rest, ok := strings.CutPrefix(out, want)
	if !ok {
		t.Errorf("promtool printed %q probed, %q unprobed", out, want)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(promParse) + `\s+` + strconv.Itoa(k) + `\s+1\s+0$`).MatchString(rest) {
		t.Errorf("want %d calls of ParseExpr, one per rule:\n%s%s", k, errs, rest)
	}
}

// TestPromtoolArtifacts: the bpftrace script and the perf commands
// generated for promtool's ParseExpr, run unedited by the installed
// bpftrace and perf, count one call per rule: the artifacts name the
// address the runtime's table gives.
func TestPromtoolArtifacts(t *testing.T) {
	needPerfTools(t)
	const k = 5
	promtool, file, _ := promtoolRules(t, k)
	// bpftrace 0.17 attaches inside a function only in a file without a
	// symbol table (promtool has .dynsym): a stripped copy, as goprobe
	// says.
	stripped := filepath.Join(t.TempDir(), "promtool")
	if out, err := exec.Command("strip", "-o", stripped, promtool).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	code, script, errs := runGoprobe("gen", "--format=bpftrace", "-x", promtool, "--target", stripped, promParse)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out := runAsSaid(t, script, stripped+" check rules "+file)
	if got := bpftraceCounts(out)[promParse]; got != k {
		t.Errorf("bpftrace counted %d calls of ParseExpr for %d rules:\n%s\n%s", got, k, out, script)
	}
	code, perf, errs := runGoprobe("gen", "--format=perf", "-x", promtool, promParse)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, n := runPerfScript(t, perf, promtool, "check", "rules", file)
	if n[0] != k {
		t.Errorf("perf counted %d calls of ParseExpr for %d rules:\n%s\n%s", n[0], k, out, perf)
	}
}

// TestPrometheusProfileNames: Debian's prometheus profiled by -p while it
// answers queries, and at the same time by its own CPU profiler
// (/debug/pprof/profile, the runtime naming its frames): every address of
// the executable that both profiles hold gets the same frames in both,
// the function and its inlined calls, and none of a wrapper the compiler
// made where the runtime leaves it out (code.Model.Traceback).
func TestPrometheusProfileNames(t *testing.T) {
	needBPF(t)
	p := testutil.StartPrometheus(t, "global: {scrape_interval: 1h}\n", true)
	goprobe := buildGoprobe(t, t.TempDir())
	ours := filepath.Join(t.TempDir(), "goprobe.pb")
	cmd := exec.Command(goprobe, "profile", "-F", "499", "-p", strconv.Itoa(p.Cmd.Process.Pid), "--pprof", ours, "--top", "0")
	var errs strings.Builder
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	own := make(chan *profile.Profile, 1)
	go func() {
		defer close(own)
		time.Sleep(time.Second) // goprobe attaches
		resp, err := http.Get("http://" + p.Addr + "/debug/pprof/profile?seconds=4")
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if pr, err := profile.Parse(resp.Body); err == nil {
			own <- pr
		}
	}()
	for end := time.Now().Add(6 * time.Second); time.Now().Before(end); {
		for _, q := range []string{"/api/v1/query?query=sum(rate(prometheus_http_requests_total[5m]))", "/metrics"} {
			if resp, err := http.Get("http://" + p.Addr + q); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	theirs := <-own
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("goprobe profile: %v\n%s", err, errs.String())
	}
	if theirs == nil {
		t.Fatal("no CPU profile from prometheus")
	}
	f, err := os.Open(ours)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mine, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	exe := p.Cmd.Path
	// frames are the functions at each address of exe, innermost first.
	frames := func(pr *profile.Profile) map[uint64][]string {
		m := map[uint64][]string{}
		for _, loc := range pr.Location {
			if len(loc.Line) > 0 && loc.Mapping != nil && loc.Mapping.File == exe {
				m[loc.Address] = testutil.Frames(loc)
			}
		}
		return m
	}
	want, got := frames(theirs), frames(mine)
	n, inlined := 0, 0
	for a, fs := range got {
		if w, ok := want[a]; ok {
			n++
			if len(w) > 1 {
				inlined++
			}
			if !slices.Equal(w, fs) {
				t.Errorf("%#x: prometheus's own profile says %v, goprobe's %v", a, w, fs)
			}
		}
	}
	if n < 20 || inlined < 2 {
		t.Fatalf("only %d addresses in both profiles (%d in prometheus's, %d in goprobe's), %d in inlined calls\n%s", n, len(want), len(got), inlined, errs.String())
	}
	t.Logf("%d addresses in both profiles have the same frames, %d of them inlined calls", n, inlined)
}

// TestCgoWorkValues: testdata/cgo-work built by every Go in
// testutil.GoToolchains, with DWARF and without (its types then from a
// reference build), traced at strconv.Atoi and fmt.Fprintln: the argument
// and the results are the program's own, in Go before the register ABI
// (go1.16: every argument and result on the stack) as after it. With
// "1000" the program converts 1000 and prints one line; with "12x" the
// conversion fails and it prints its usage line to standard error: n is
// the length of the line each printed unprobed. With DWARF (Go 1.16 to
// 1.20 compress it into .zdebug_ sections), main.work's argument is the
// loop's index, 0 to 999. Only Go 1.16's DWARF leaves s ? (it gives the
// 16-byte string four 8-byte pieces), never another value.
func TestCgoWorkValues(t *testing.T) {
	needBPF(t)
	n := 0
	for _, tc := range testutil.GoToolchains {
		for _, mode := range []string{"internal", "stripped", "pie-stripped"} {
			bin := testutil.BuildCgoWork(t, tc, mode)
			for _, c := range []struct{ arg, r0, r1 string }{{"1000", "1000", `nil`}, {"12x", "0", `[^n?]\S*`}} {
				var stdout, stderr strings.Builder
				run := exec.Command(bin, c.arg)
				run.Stdout, run.Stderr = &stdout, &stderr
				run.Run()
				line := len(stdout.String() + stderr.String())
				if line < 5 {
					t.Fatalf("%s %s %s unprobed: %q %q", tc, mode, c.arg, stdout.String(), stderr.String())
				}
				defs := []string{"strconv.Atoi s", "strconv.Atoi%return $retval", "fmt.Fprintln%return $retval"}
				if mode == "internal" {
					defs = append(defs, "main.work i")
				}
				code, out, errs := runGoprobe(append(append([]string{"trace"}, defs...), "--", bin, c.arg)...)
				if code != 0 && c.arg == "1000" {
					t.Fatalf("%s %s: exit %d: %s", tc, mode, code, errs)
				}
				s := `"` + c.arg + `"`
				if mode == "internal" && strings.HasPrefix(tc, "go1.16.") {
					s = `\?`
				}
				if mode == "internal" {
					workArgs(t, out, c.arg)
				}
				for _, re := range []string{
					`strconv\.Atoi site=entry s=` + s + `\n`,
					`strconv\.Atoi site=return r0=` + c.r0 + ` r1=` + c.r1 + `\n`,
					`fmt\.Fprintln site=return n=` + strconv.Itoa(line) + ` err=nil\n`,
				} {
					n++
					if !regexp.MustCompile(`(?m)^\d+/\d+ ` + re).MatchString(out + errs) {
						t.Errorf("%s %s %s: want %s; goprobe said:\n%s%s", tc, mode, c.arg, re, out, errs)
					}
				}
				if mode != "internal" && !strings.Contains(out+errs, `s="`+c.arg+`"`) {
					t.Errorf("%s %s %s: s not read from the reference's types:\n%s%s", tc, mode, c.arg, out, errs)
				}
			}
		}
	}
	if n < 6*3*len(testutil.GoToolchains) {
		t.Fatalf("only %d values compared", n)
	}
}

// workArgs checks that the trace out of cgo-work run with arg saw main.work
// called with 0, 1, ... up to arg's value, in order (none for a bad arg).
func workArgs(t *testing.T, out, arg string) {
	t.Helper()
	n, _ := strconv.Atoi(arg)
	ms := regexp.MustCompile(`(?m)^\d+/\d+ main\.work site=entry i=(\S+)$`).FindAllStringSubmatch(out, -1)
	if len(ms) != n {
		t.Errorf("%d calls of main.work traced, want %d", len(ms), n)
		return
	}
	for i, m := range ms {
		if m[1] != strconv.Itoa(i) {
			t.Errorf("call %d of main.work: i=%s", i, m[1])
			return
		}
	}
}

// TestOldGoRefused: Go binaries older than the tables goprobe reads (Go
// 1.16's .gopclntab): go1.2.2, the oldest Go the module registry serves
// (the go command fetches it by GOTOOLCHAIN; no cgo with today's gcc),
// and go1.15.15, the last before Go 1.16, with cgo and -s -w. Probed or
// turned into artifacts, each is refused with one line that names the
// file and its .gopclntab, before the program runs: nothing attaches.
func TestOldGoRefused(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old")
	os.Mkdir(old, 0o755)
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n" +
		// Go 1.2 has no go:noinline, and does not inline a function that panics.
		"func work(i int) int {\n\tif i < 0 {\n\t\tpanic(i)\n\t}\n\treturn i*3 + 1\n}\n\n" +
		"func main() {\n\tt := 0\n\tfor i := 0; i < len(os.Args[1]); i++ {\n\t\tt += work(i)\n\t}\n\tfmt.Println(\"ran\", t)\n}\n"
	for name, text := range map[string]string{"main.go": src, "go.mod": "module old\n\ngo 1.16\n"} {
		if err := os.WriteFile(filepath.Join(old, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-o", "old", ".")
	cmd.Dir = old
	cmd.Env = append(os.Environ(), "PATH="+testutil.ToolPath(), "GOTOOLCHAIN=go1.2.2", "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go1.2.2: go build: %v\n%s", err, out)
	}
	bins := []string{filepath.Join(old, "old"), testutil.BuildCgoWork(t, "go1.15.15", "stripped")}
	for _, bin := range bins {
		for _, args := range [][]string{
			{"stat", "main.work", "--", bin, "1000"},
			{"gen", "--format=perf", "-x", bin, "main.work"},
			{"gen", "--format=bpftrace", "-x", bin, "main.work"},
		} {
			code, out, errs := runGoprobe(args...)
			if code == 0 || out != "" || strings.Count(errs, "\n") != 1 ||
				!strings.Contains(errs, bin+": section .gopclntab: ") || !strings.Contains(errs, "Go 1.16 and later") {
				t.Errorf("goprobe %v: exit %d, stdout %q, stderr %q: want one line refusing the table", args[:2], code, out, errs)
			}
		}
	}
}

// TestCgoSharedLibrary: a Go library built with -buildmode=c-shared (its
// own .gopclntab and runtime, in a shared object the dynamic loader
// places), with and without -s -w, called by a C program N times:
// goprobe stat -x counts N calls of the exported Step and of main.work
// it calls, every work on the stack main.work <- main.Step, and the
// program prints what it prints unprobed.
func TestCgoSharedLibrary(t *testing.T) {
	needBPF(t)
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "cgo-shared")
	const n = 500
	for _, ldflags := range []string{"", "-s -w"} {
		dir := t.TempDir()
		lib, prog := filepath.Join(dir, "libstep.so"), filepath.Join(dir, "prog")
		build := exec.Command("go", "build", "-buildmode=c-shared", "-ldflags="+ldflags, "-o", lib, ".")
		build.Dir = src
		build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		if out, err := exec.Command("gcc", "-o", prog, filepath.Join(src, "main.c"), lib, "-Wl,-rpath,"+dir).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		want, err := exec.Command(prog, strconv.Itoa(n)).Output()
		if err != nil || !strings.Contains(string(want), "calls "+strconv.Itoa(n)) {
			t.Fatalf("unprobed: %v %q", err, want)
		}
		code, out, errs := runGoprobe("stat", "--stacks", "-x", lib, "main.work", "Step", "--", prog, strconv.Itoa(n))
		if code != 0 {
			t.Fatalf("ldflags %q: exit %d: %s", ldflags, code, errs)
		}
		if !strings.HasPrefix(out, string(want)) {
			t.Errorf("ldflags %q: printed %q probed, %q unprobed", ldflags, out, want)
		}
		for _, re := range []string{`(?m)^main\.work: ` + strconv.Itoa(n) + ` hits`, `(?m)^Step: ` + strconv.Itoa(n) + ` hits`,
			`(?m)^\s+` + strconv.Itoa(n) + `\s+main\.work\n\s+main\.Step\n`} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("ldflags %q: want %s; goprobe said:\n%s%s", ldflags, re, out, errs)
			}
		}
	}
}

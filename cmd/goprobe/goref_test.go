package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// Go binaries built as production images are (-ldflags='-s -w' -trimpath)
// get their types and signatures from a reference build (package goref).

const promPkg = "github.com/prometheus/client_golang/prometheus."

// TestGoRefTraceStripped: return probes on every update method of two
// client_golang versions whose counter and Desc layouts differ, on builds
// without DWARF, report what each program reports.
func TestGoRefTraceStripped(t *testing.T) {
	needBPF(t)
	for _, name := range []string{"go-prom-stripped", "go-prom-v111-stripped"} {
		t.Run(name, func(t *testing.T) {
			traceClientGolang(t, testutil.Fixture(t, name).Path)
		})
	}
}

// TestGoRefUnavailable: the main package, whose source no module cache
// holds, is one line that says what to do (gopahole's TestGoRefUnavailable
// has a dependency that cannot be had).
func TestGoRefUnavailable(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	cmdtest.NoModuleSource(t)
	code, _, errs := runGoprobe("gen", "--format=spec", "-x", bin, "main.main x")
	if code != 1 || !strings.Contains(errs, "package main") || strings.Count(errs, "\n") != 1 {
		t.Errorf("main: exit %d, stderr:\n%s", code, errs)
	}
}

// TestStrippedInlineCounts: every inlined call of go-inline, direct and
// nested, is counted once per call without DWARF (sites from .gopclntab's
// inline tree) as with it, and as the program counts its own calls.
func TestStrippedInlineCounts(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "testdata", "fixtures", "go-inline")
	tmp := t.TempDir()
	for _, v := range []string{"", "stripped"} {
		bin := filepath.Join(tmp, "inline"+v)
		if out, err := exec.Command("sh", filepath.Join(dir, "build.sh"), bin, v).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", v, err, out)
		}
		code, out, errs := runGoprobe("stat", "main.leaf", "main.mid", "--", bin, "1000")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", v, code, errs)
		}
		want := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^calls (\S+) (\d+)$`).FindAllStringSubmatch(out, -1) {
			want[m[1]] = m[2]
		}
		if len(want) != 2 {
			t.Fatalf("%s: the program printed no counts:\n%s", v, out)
		}
		for fn, n := range want {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fn) + `\s+` + n + `\s+[2-9]\s`).MatchString(errs + out) {
				t.Errorf("%s: %s: want %s calls at its inline sites; goprobe said:\n%s", v, fn, n, errs+out)
			}
		}
	}
}

// TestGoRefInternalTrace: cmd/go built as production images are (no
// DWARF) is traced through types of its internal packages
// (cmd/go/internal/work.Action, cmd/go/internal/load.Package and its
// embedded PackagePublic): `go vet ./...` traces one vet call for each
// package of the module (exactly those `go list ./...` names, each once)
// and for some of their dependencies (each one `go list -deps` names).
func TestGoRefInternalTrace(t *testing.T) {
	needBPF(t)
	tmp := t.TempDir()
	gobin := filepath.Join(tmp, "go-stripped")
	if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-trimpath", "-o", gobin, "cmd/go").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/go: %v\n%s", err, out)
	}
	mod := filepath.Join(tmp, "mod")
	files := map[string]string{
		"go.mod":  "module example.com/vm\n\ngo 1.21\n",
		"a/a.go":  "package a\n\nfunc A() int { return 1 }\n",
		"b/b.go":  "package b\n\nimport \"example.com/vm/a\"\n\nfunc B() int { return a.A() }\n",
		"c/c.go":  "package c\n\nfunc C() string { return \"c\" }\n",
		"main.go": "package main\n\nimport (\n\t\"example.com/vm/b\"\n\t\"example.com/vm/c\"\n)\n\nfunc main() { println(b.B(), c.C()) }\n",
	}
	for name, text := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goList := func(args ...string) []string {
		list := exec.Command("go", append([]string{"list"}, args...)...)
		list.Dir = mod
		out, err := list.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	want, deps := goList("./..."), map[string]bool{}
	for _, p := range goList("-deps", "./...") {
		deps[p] = true
	}
	// A fresh build cache: vet results are cached, and a cached package
	// is not vetted again.
	run := "cd " + mod + " && GOROOT=" + runtime.GOROOT() + " GOCACHE=" + filepath.Join(tmp, "cache") + " GOTOOLCHAIN=local GOFLAGS= " + gobin + " vet ./..."
	code, tr, errs := runGoprobe("trace", "-x", gobin, "cmd/go/internal/work.(*Builder).vet a->Package->ImportPath", "--", "sh", "-c", run)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := regexp.MustCompile(`ImportPath="([^"]*)"`).FindAllStringSubmatch(tr, -1)
	var paths []string
	for _, m := range got {
		if !deps[m[1]] {
			t.Errorf("vetted %q, which is no package of the build (go list -deps)", m[1])
		}
		if strings.HasPrefix(m[1], "example.com/") {
			paths = append(paths, m[1])
		}
	}
	sort.Strings(paths)
	sort.Strings(want)
	if len(want) < 4 || strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("vetted %q of the module, go list names %q; goprobe said:\n%s%s", paths, want, tr, errs)
	}
}

// TestGoRefPrometheusPaths: Debian's prometheus (go1.19.8, cgo, external
// linking, no DWARF) probed by -p prints the path of every request it
// serves, from the types of a go1.19.8 reference build: exactly the
// paths sent, in order. Every response is the one the server gave to the
// same request unprobed, and its own prometheus_http_requests_total grows
// by handler and code as it did for the unprobed round.
func TestGoRefPrometheusPaths(t *testing.T) {
	needBPF(t)
	prom := testutil.StartPrometheus(t, "global: {scrape_interval: 1h}\n", true)
	bin := buildGoprobe(t, t.TempDir())
	sent := []string{"/-/healthy", "/api/v1/status/buildinfo", "/metrics", "/-/ready"}
	for i := 0; i < 20; i++ {
		sent = append(sent, fmt.Sprintf("/binscope/%d/path", i))
	}
	// answer is the response to path; /metrics's body changes with
	// every read, its status is compared.
	answer := func(path string) string {
		code, body := prom.Get(t, path+"?q=1")
		if path == "/metrics" {
			body = ""
		}
		return fmt.Sprintf("%d %q", code, body)
	}
	unprobed := map[string]string{}
	before := prom.Requests(t)
	for _, p := range sent {
		unprobed[p] = answer(p)
	}
	between := prom.Requests(t)
	finish := startAttached(t, bin, "trace", "-p", strconv.Itoa(prom.Cmd.Process.Pid), "net/http.serverHandler.ServeHTTP req->URL->Path")
	for _, p := range sent {
		if got := answer(p); got != unprobed[p] {
			t.Errorf("GET %s: probed %s, unprobed %s", p, got, unprobed[p])
		}
	}
	after := prom.Requests(t)
	time.Sleep(500 * time.Millisecond)
	out, errs := finish(true)
	var got []string
	for _, m := range regexp.MustCompile(`req->URL->Path="([^"]*)"`).FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	// The paths sent, and the read of /metrics that counted them.
	if want := append(sent, "/metrics"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("traced paths %q, sent %q; goprobe said:\n%s%s", got, want, out, errs)
	}
	grew := 0
	for k := range after {
		if d0, d1 := between[k]-before[k], after[k]-between[k]; d0 != d1 {
			t.Errorf("prometheus_http_requests_total{%s} grew by %d probed, by %d unprobed", k, d1, d0)
		} else if d1 > 0 {
			grew++
		}
	}
	if grew < 4 {
		t.Errorf("only %d of prometheus's request counters grew: %v -> %v", grew, between, after)
	}
}

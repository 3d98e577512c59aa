package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCgoLinkModesCount: testdata/cgo-work (a cgo loop calling work N
// times, then printing the total), built by the oldest and newest Go the
// module registry serves and by the machine's own, linked internally,
// externally, as PIE and with -s -w: `goprobe stat main.work` counts
// exactly N calls, and the program prints byte for byte what it prints
// unprobed.
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
			code, out, errs := runGoprobe("stat", "main.work", "--", bin, strconv.Itoa(n))
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
		resp, err := http.Get("http://" + p.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return string(b)
	}
	const healthy = `prometheus_http_requests_total{code="200",handler="/-/healthy"}`
	counter := func() int {
		t.Helper()
		for _, l := range strings.Split(get("/metrics"), "\n") {
			if v, ok := strings.CutPrefix(l, healthy+" "); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %q", healthy, l)
				}
				return n
			}
		}
		return 0
	}
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
		t.Errorf("prometheus_http_requests_total of /-/healthy grew by %d for %d requests", after-before, n)
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

// TestPromtoolParseExpr: `promtool check rules` on a file of k rules
// (Debian's promtool: go1.19, cgo, stripped) calls the PromQL parser's
// ParseExpr once per rule, and says every rule is fine as it does
// unprobed.
func TestPromtoolParseExpr(t *testing.T) {
	needBPF(t)
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testutil.Skipf(t, "promtool not installed (bash scripts/install-deps.sh): %v", err)
	}
	const k = 7
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: g\n    rules:\n")
	for i := range k {
		fmt.Fprintf(&rules, "      - record: job:r%d:sum\n        expr: sum by (job) (rate(http_requests_total{i=\"%d\"}[5m]))\n", i, i)
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(promtool, "check", "rules", file).Output()
	if err != nil || !strings.Contains(string(want), fmt.Sprintf("SUCCESS: %d rules found", k)) {
		t.Fatalf("promtool check rules unprobed: %v\n%s", err, want)
	}
	const parse = "github.com/prometheus/prometheus/promql/parser.ParseExpr"
	code, out, errs := runGoprobe("stat", parse, "--", promtool, "check", "rules", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rest, ok := strings.CutPrefix(out, string(want))
	if !ok {
		t.Errorf("promtool printed %q probed, %q unprobed", out, want)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(parse) + `\s+` + strconv.Itoa(k) + `\s+1\s+0$`).MatchString(rest) {
		t.Errorf("want %d calls of ParseExpr, one per rule:\n%s%s", k, errs, rest)
	}
}

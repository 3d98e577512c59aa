package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// buildGoprobe builds cmd/goprobe into dir.
func buildGoprobe(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "goprobe")
	build := exec.Command("go", "build", "-o", bin, "./cmd/goprobe")
	build.Dir = testutil.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startAgent runs goprobe with args until the test ends (SIGINT, then
// waits) and returns the address its metrics are served at, once its
// probes are attached.
func startAgent(t *testing.T, bin string, args ...string) (addr string, stderr func() string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	var mu sync.Mutex
	var all strings.Builder
	text := func() string {
		mu.Lock()
		defer mu.Unlock()
		return all.String()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			all.WriteString(sc.Text() + "\n")
			mu.Unlock()
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		pw.Close()
		<-done
	})
	re := regexp.MustCompile(`metrics at http://(\S+)/metrics`)
	attached := false
	deadline := time.After(60 * time.Second)
	for addr == "" || !attached {
		select {
		case l := <-lines:
			if m := re.FindStringSubmatch(l); m != nil {
				addr = m[1]
			}
			attached = attached || strings.Contains(l, "attached")
		case <-deadline:
			t.Fatalf("goprobe %v: no metrics address after 60 s:\n%s", args, text())
		}
	}
	return addr, text
}

// startPrometheus runs Debian's Prometheus server scraping targets every
// second, with its storage in a temporary directory, and returns its
// address.
func startPrometheus(t *testing.T, targets ...string) string {
	t.Helper()
	var ts []string
	for _, a := range targets {
		ts = append(ts, fmt.Sprintf("%q", a))
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: goprobe\n    static_configs:\n      - targets: [%s]\n", strings.Join(ts, ", "))
	return testutil.StartPrometheus(t, cfg, false).Addr
}

// promQuery asks Prometheus's HTTP API for query's value now: the single
// series' value, or "" while there is none.
func promQuery(t *testing.T, addr, query string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value []any
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) != 1 || len(r.Data.Result[0].Value) != 2 {
		return ""
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return s
}

// waitQuery polls query until it equals want, for at most a minute.
func waitQuery(t *testing.T, addr, query, want string) {
	t.Helper()
	got := ""
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if got = promQuery(t, addr, query); got == want {
			return
		}
	}
	t.Errorf("Prometheus: %s = %q after a minute, want %q", query, got, want)
}

// TestPrometheus: a real Prometheus server scraping goprobe stat and hist
// --listen every second holds, for the go-prom fixture's counter, the
// number of Inc calls the program says it made (keyed by the counter's
// name read through c->desc->fqName, a Go string) and the calls of Add;
// promtool accepts the exposition.
func TestPrometheus(t *testing.T) {
	needBPF(t)
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testutil.Skipf(t, "promtool not installed (bash scripts/install-deps.sh): %v", err)
	}
	// A copy of its own: the agents probe every process running the file,
	// and other packages' tests run the fixture at the same time.
	app := filepath.Join(t.TempDir(), "go-prom")
	if data, err := os.ReadFile(testutil.Fixture(t, "go-prom").Path); err != nil || os.WriteFile(app, data, 0o755) != nil {
		t.Fatalf("copying go-prom: %v", err)
	}
	goprobe := buildGoprobe(t, t.TempDir())
	const inc = "github.com/prometheus/client_golang/prometheus.(*counter).Inc"
	const add = "github.com/prometheus/client_golang/prometheus.(*counter).Add"
	histAddr, _ := startAgent(t, goprobe, "hist", "--listen", "127.0.0.1:0", "-x", app, "--key", "c->desc->fqName",
		"--metric", "app_requests_incs_total", "--label", "name", inc)
	statAddr, _ := startAgent(t, goprobe, "stat", "--listen", "127.0.0.1:0", "-x", app, inc, add)
	prom := startPrometheus(t, histAddr, statAddr)

	// The program's own account: each run prints every Inc (and Add) it
	// made after main's first Inc.
	incs, adds := 0, 0
	for range 2 {
		out, err := exec.Command(app, "updates").Output()
		if err != nil {
			t.Fatal(err)
		}
		incs += strings.Count(string(out), "update requests_total Inc ") + 1
		adds += strings.Count(string(out), "update requests_total Add ")
	}
	waitQuery(t, prom, `app_requests_incs_total{name="requests_total"}`, fmt.Sprint(incs))
	waitQuery(t, prom, `goprobe_prometheus_inc_calls_total`, fmt.Sprint(incs))
	waitQuery(t, prom, `goprobe_prometheus_add_calls_total`, fmt.Sprint(adds))
	waitQuery(t, prom, `sum(up{job="goprobe"})`, "2")
	waitQuery(t, prom, `goprobe_probe_sites{metric="app_requests_incs_total"}`, "1")

	for _, a := range []string{histAddr, statAddr} {
		resp, err := http.Get("http://" + a + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		check := exec.Command(promtool, "check", "metrics")
		check.Stdin = strings.NewReader(string(body))
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, body)
		}
	}
}

// scrape returns the value of the sample named series (with its labels,
// as the exposition spells them) at addr's /metrics, or "".
func scrape(t *testing.T, addr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

// TestServe: goprobe serve attaches a probes file's probes to a binary
// named by path before any process runs it, counts every process that
// runs it, follows the file when it is replaced (a deploy: a new inode)
// with the counts carried over, and keeps them across SIGHUP.
func TestServe(t *testing.T) {
	needBPF(t)
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	src := testutil.Fixture(t, "go-prom").Path
	cp := func() {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(app+".new", b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(app+".new", app); err != nil {
			t.Fatal(err)
		}
	}
	cp()
	cfg := filepath.Join(dir, "probes.json")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{"listen": "127.0.0.1:0", "probes": [
 {"binary": %q, "probe": "github.com/prometheus/client_golang/prometheus.(*counter).Inc", "key": "c->desc->fqName", "label": "name", "metric": "app_requests_incs_total"}]}`, app)), 0o644)
	goprobe := buildGoprobe(t, t.TempDir())
	addr, stderr := startAgent(t, goprobe, "serve", cfg)
	want := 0
	run := func() {
		out, err := exec.Command(app, "updates").Output()
		if err != nil {
			t.Fatal(err)
		}
		want += strings.Count(string(out), "update requests_total Inc ") + 1
	}
	wait := func(what string) {
		t.Helper()
		got := ""
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if got = scrape(t, addr, `app_requests_incs_total{name="requests_total"}`); got == fmt.Sprint(want) {
				return
			}
		}
		t.Fatalf("%s: app_requests_incs_total = %q, want %d\n%s", what, got, want, stderr())
	}
	run()
	run()
	wait("two runs")
	cp()
	for end := time.Now().Add(20 * time.Second); !strings.Contains(stderr(), "replaced on disk") && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	run()
	wait("a run of the replaced file")
	syscall.Kill(agentPid(t, goprobe), syscall.SIGHUP)
	for end := time.Now().Add(10 * time.Second); !strings.Contains(stderr(), "read again") && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	run()
	wait("after SIGHUP")
}

// agentPid finds the process running bin (started by this test).
func agentPid(t *testing.T, bin string) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == bin {
			return pid
		}
	}
	t.Fatalf("no process runs %s", bin)
	return 0
}

// TestSoak runs bench/soak.sh for 20 s (its default is 30 minutes): the
// soak server's own request count equals goprobe serve's
// soak_requests_total while a load generator runs (the script fails
// otherwise). Skipped with -short.
func TestSoak(t *testing.T) {
	needBPF(t)
	if testing.Short() {
		t.Skip("a 30 s soak")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testutil.Skipf(t, "curl not installed: %v", err)
	}
	cmd := exec.Command("bash", "bench/soak.sh", "20", "200", "2")
	cmd.Dir = testutil.Root(t)
	cmd.Env = append(os.Environ(), "BENCH_OUT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(equal)") {
		t.Errorf("bench/soak.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

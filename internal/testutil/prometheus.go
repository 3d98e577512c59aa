package testutil

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FreePort is a TCP port on 127.0.0.1 nothing listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Prometheus is Debian's Prometheus server (go1.19, cgo, external linking,
// stripped: .gopclntab only) running for a test.
type Prometheus struct {
	// Addr is host:port of its web interface.
	Addr string
	// Cmd is the running server.
	Cmd *exec.Cmd
}

// StartPrometheus runs /usr/bin/prometheus with config (YAML) on a free
// local port, its storage in a temporary directory; it stops it when the
// test ends and logs its output if the test failed. With wait it returns
// once the server answers /-/ready. It skips when prometheus is not
// installed (scripts/install-deps.sh installs it).
func StartPrometheus(t testing.TB, config string, wait bool) *Prometheus {
	t.Helper()
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		Skipf(t, "prometheus not installed (bash scripts/install-deps.sh): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Prometheus{Addr: fmt.Sprintf("127.0.0.1:%d", FreePort(t))}
	p.Cmd = exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+p.Addr)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	p.Cmd.Stdout, p.Cmd.Stderr = logf, logf
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Cmd.Process.Signal(syscall.SIGTERM)
		p.Cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	if wait {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get("http://" + p.Addr + "/-/ready")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("prometheus at %s not ready after a minute: %v", p.Addr, err)
			}
		}
	}
	return p
}

// Get fetches path (with its query) from the server: the status code and
// the body.
func (p *Prometheus) Get(t testing.TB, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.Addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

var requestsLine = regexp.MustCompile(`^prometheus_http_requests_total\{code="(\d+)",handler="([^"]*)"\} (\d+)$`)

// Requests is the server's own count of the requests it served,
// prometheus_http_requests_total, by handler and code ("/-/healthy 200"),
// read from its /metrics (a read the next count includes). It fails the
// test when the server names no handler.
func (p *Prometheus) Requests(t testing.TB) map[string]int {
	t.Helper()
	code, body := p.Get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", code)
	}
	n := map[string]int{}
	for _, l := range strings.Split(body, "\n") {
		if m := requestsLine.FindStringSubmatch(l); m != nil {
			v, err := strconv.Atoi(m[3])
			if err != nil {
				t.Fatalf("/metrics: %q", l)
			}
			n[m[2]+" "+m[1]] = v
		}
	}
	if len(n) == 0 {
		t.Fatalf("/metrics has no prometheus_http_requests_total:\n%s", body)
	}
	return n
}

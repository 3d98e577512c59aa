package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// buildC compiles cmd/goprobe/testdata/NAME.c with gcc and args.
func buildC(t *testing.T, name string, args ...string) string {
	t.Helper()
	return buildSource(t, "gcc", name, ".c", args...)
}

// buildCXX builds testdata/NAME.cc with g++ and args.
func buildCXX(t *testing.T, name string, args ...string) string {
	t.Helper()
	return buildSource(t, "g++", name, ".cc", args...)
}

// buildSource builds testdata/NAME+ext with the compiler cc and args.
func buildSource(t *testing.T, cc, name, ext string, args ...string) string {
	t.Helper()
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", name+ext)
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command(cc, append(append([]string{"-o", bin}, args...), src)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, name, err, out)
	}
	return bin
}

var tickCalls = regexp.MustCompile(`tick calls: (\d+) \(sum (\d+)\)`)

// tickerSaid is the ticker's own record: its calls and their sum.
func tickerSaid(t *testing.T, out string) (calls, sum int) {
	t.Helper()
	m := tickCalls.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the ticker did not end normally:\n%s", out)
	}
	calls, _ = strconv.Atoi(m[1])
	sum, _ = strconv.Atoi(m[2])
	return calls, sum
}

// TestTraceCountStops: trace -n 5 prints the first five calls (their
// arguments are the loop's first five indices), detaches, and the
// command runs on to its end: its own record says it made every call
// with the values an unprobed run returns, and its status is goprobe's.
func TestTraceCountStops(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "ticker", "-O2", "-g")
	code, out, errs := runGoprobe("trace", "--json", "-n", "5", "tick i", "--", bin, "400", "500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var is []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct{ Args map[string]any }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		is = append(is, strconv.Itoa(int(e.Args["i"].(float64))))
	}
	if strings.Join(is, " ") != "0 1 2 3 4" {
		t.Errorf("events with i = %v, want the first five calls 0 1 2 3 4\n%s", is, out)
	}
	calls, sum := tickerSaid(t, out)
	if calls != 400 || sum != 3*400*399/2+400 {
		t.Errorf("the ticker said %d calls, sum %d: not a whole, unharmed run", calls, sum)
	}
	if !strings.Contains(errs, "stopped after 5 hits") || !strings.Contains(errs, "runs on unprobed") {
		t.Errorf("no note of the stop:\n%s", errs)
	}
}

// startProgram starts a test program as a process of its own and returns
// it with a reader of its output, once it printed "NAME started".
func startProgram(t *testing.T, bin string, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	c := exec.Command(bin, args...)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	r := bufio.NewReader(stdout)
	if l, err := r.ReadString('\n'); err != nil || l != filepath.Base(bin)+" started\n" {
		t.Fatalf("%s: %q %v", bin, l, err)
	}
	return c, r
}

// endProgram waits for a program startProgram started and returns the
// rest of its output.
func endProgram(t *testing.T, c *exec.Cmd, r *bufio.Reader) string {
	t.Helper()
	rest, _ := r.ReadString(0)
	if err := c.Wait(); err != nil {
		t.Fatalf("%s ended with %v:\n%s", c.Path, err, rest)
	}
	return rest
}

// statCountOf is the count of probe in goprobe stat --json's output.
func statCountOf(t *testing.T, out string) []int {
	t.Helper()
	var counts []int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s struct{ Probes []struct{ Count int } }
		if err := json.Unmarshal([]byte(l), &s); err != nil || len(s.Probes) != 1 {
			t.Fatalf("not stat's JSON: %q: %v", l, err)
		}
		counts = append(counts, s.Probes[0].Count)
	}
	return counts
}

// TestStatStopsOnProcess: on a running process, stat stops by itself
// after a time (with counts at each interval) or a number of hits, and
// the process it leaves runs on to its normal end, with the values an
// unprobed run computes.
func TestStatStopsOnProcess(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "ticker", "-O2", "-g")
	for _, tc := range []struct {
		name  string
		n, us int // calls, and a sleep between them: about n*(us+60) µs
		args  []string
	}{
		{"duration", 10000, 200, []string{"--duration", "600ms", "--interval", "100ms"}},
		{"count", 10000, 200, []string{"-n", "50"}},
		{"hot", 20000, 1, []string{"-n", "2000"}}, // detach under fire
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			c, r := startProgram(t, bin, strconv.Itoa(n), strconv.Itoa(tc.us))
			start := time.Now()
			code, out, errs := runGoprobe(append([]string{"stat", "--json", "-p", strconv.Itoa(c.Process.Pid), "tick"}, tc.args...)...)
			took := time.Since(start)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if c.Process.Signal(syscall.Signal(0)) != nil {
				t.Fatalf("the process did not outlive goprobe's stop")
			}
			counts := statCountOf(t, out)
			last := counts[len(counts)-1]
			switch tc.name {
			case "duration":
				// 600 ms at 100 ms: five or six tables so far, then the last.
				if len(counts) < 5 || took < 600*time.Millisecond || took > 3*time.Second {
					t.Errorf("%d tables in %v: %v", len(counts), took, counts)
				}
				for i := 1; i < len(counts); i++ {
					if counts[i] < counts[i-1] {
						t.Errorf("counts went down: %v", counts)
					}
				}
			default:
				want, _ := strconv.Atoi(tc.args[1])
				if last < want {
					t.Errorf("stopped at %d hits, before %d", last, want)
				}
			}
			calls, sum := tickerSaid(t, endProgram(t, c, r))
			if last < 1 || last >= calls || calls != n || sum != 3*n*(n-1)/2+n {
				t.Errorf("stat counted %d; the ticker made %d calls (sum %d)\n%s", last, calls, sum, errs)
			}
		})
	}
}

// TestHistCountStops: hist -n 20 keyed by the loop index stops with the
// first twenty indices counted once each, and the command runs to its
// end.
func TestHistCountStops(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "ticker", "-O2", "-g")
	code, out, errs := runGoprobe("hist", "--json", "-n", "20", "--key", "i", "tick", "--", bin, "300", "1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	i := strings.Index(out, `{"probes"`)
	if i < 0 {
		t.Fatalf("no table:\n%s", out)
	}
	var h struct {
		Probes []struct {
			Keys []struct {
				Key   float64
				Count int
			}
		}
	}
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(&h); err != nil || len(h.Probes) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	seen := map[int]int{}
	for _, k := range h.Probes[0].Keys {
		seen[int(k.Key)] += k.Count
	}
	for k := 0; k < 20; k++ {
		if seen[k] != 1 {
			t.Errorf("index %d counted %d times, want once", k, seen[k])
		}
	}
	if len(seen) >= 300 {
		t.Errorf("%d keys: the stop did not detach", len(seen))
	}
	if calls, _ := tickerSaid(t, out); calls != 300 {
		t.Errorf("the ticker made %d calls", calls)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// TestSharedSitesCookie: the eight inline sites of testdata/sites.c run
// one program through one link, and each event learns its site from the
// attach cookie.
func TestSharedSitesCookie(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sites", "-O2", "-g")
	code, out, errs := runGoprobe("trace", "--json", "hit k", "--", bin)
	if code != 0 {
		t.Fatalf("goprobe trace: exit %d: %s", code, errs)
	}
	checkSiteEvents(t, bin, out, 8)
}

// TestDispatchedSitesOneLink: the twelve inline sites of testdata/plans.c
// read their argument in three kinds of places (a constant differing at
// each), so that goprobe loads a program per place; the probe still
// attaches with one link (counted in this process's file descriptors
// while the program runs), and each event names its site and the value
// the program says it passed there.
func TestDispatchedSitesOneLink(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "plans", "-O2", "-g")
	var code int
	var out, errs string
	n := mostLinks(t, func() { code, out, errs = runGoprobe("trace", "--json", "hit k", "--", bin) })
	if code != 0 {
		t.Fatalf("goprobe trace: exit %d: %s", code, errs)
	}
	checkSiteEvents(t, bin, out, 12)
	if n != 1 {
		t.Errorf("the probe of 12 sites held %d BPF links at most, want 1", n)
	}
}

// mostLinks runs run and returns the most BPF links this process held
// meanwhile (sampled every 5 ms).
func mostLinks(t *testing.T, run func()) int {
	t.Helper()
	var most atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			most.Store(max(most.Load(), int64(openLinks(t))))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	run()
	close(stop)
	<-done
	return int(most.Load())
}

// openLinks counts this process's BPF link file descriptors.
func openLinks(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && l == "anon_inode:bpf_link" {
			n++
		}
	}
	return n
}

// checkSiteEvents checks the events of goprobe trace --json 'hit k' on
// bin against the program's record in out (lines "FUNCTION K": it passed
// K where hit is inlined into FUNCTION, n functions): each event's site
// address must lie in the function the symbol table says holds it, with
// the argument the program passed there, and every function must have
// its event.
func checkSiteEvents(t *testing.T, bin, out string, n int) {
	t.Helper()
	syms := testutil.FuncSymbols(t, bin)
	passed := map[string]string{} // the program's record: function -> argument
	for _, l := range strings.Split(out, "\n") {
		if name, v, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(name, "{") {
			passed[name] = v
		}
	}
	if len(passed) != n {
		t.Fatalf("the program recorded %d calls, want %d:\n%s", len(passed), n, out)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct {
			Addr string
			Args map[string]any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		a, err := strconv.ParseUint(e.Addr, 0, 64)
		if err != nil {
			t.Fatalf("event %s: addr: %v", l, err)
		}
		in := ""
		for _, s := range syms {
			if _, ok := passed[s.Name]; ok && a >= s.Value && a < s.Value+s.Size {
				in = s.Name
			}
		}
		if k := fmt.Sprint(e.Args["k"]); in == "" || passed[in] != k {
			t.Errorf("event at %s (in %q) has k=%s; the program passed %q there", e.Addr, in, k, passed[in])
		}
		seen[in] = true
	}
	if len(seen) != n {
		t.Errorf("events at %d of the %d functions:\n%s", len(seen), n, out)
	}
}

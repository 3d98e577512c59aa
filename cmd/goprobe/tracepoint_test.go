package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestTracepointTimeline: a Go program's counter increments (a uprobe) and
// its connect(2) calls (the syscalls:sys_enter_connect tracepoint) come
// out as one stream in time order, with the increments and the fds the
// program itself recorded; stat counts both.
func TestTracepointTimeline(t *testing.T) {
	needBPF(t)
	bin := filepath.Join(t.TempDir(), "connect")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(testutil.Root(t), "probe", "testdata", "connect")
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const n = 12
	code, out, errs := runGoprobe("trace", "--json", "main.(*counter).Inc by", "syscalls:sys_enter_connect fd addrlen",
		"--", bin, fmt.Sprint(n))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var truth []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "inc ") || strings.HasPrefix(l, "connect ") {
			truth = append(truth, l)
		}
	}
	type event struct {
		Probe  string           `json:"probe"`
		TimeNS uint64           `json:"time_ns"`
		Args   map[string]int64 `json:"args"`
	}
	var evs []event
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		evs = append(evs, e)
	}
	if !sort.SliceIsSorted(evs, func(i, j int) bool { return evs[i].TimeNS < evs[j].TimeNS }) {
		t.Errorf("events are not in time order")
	}
	var got []string
	for _, e := range evs {
		switch {
		case strings.HasPrefix(e.Probe, "main.(*counter).Inc"):
			got = append(got, fmt.Sprintf("inc %d", e.Args["by"]))
		case strings.HasPrefix(e.Probe, "syscalls:sys_enter_connect"):
			if e.Args["addrlen"] != 16 {
				t.Errorf("connect with addrlen %d; an IPv4 address is 16 bytes", e.Args["addrlen"])
			}
			got = append(got, fmt.Sprintf("connect %d", e.Args["fd"]))
		}
	}
	if len(truth) != 2*n || strings.Join(got, "\n") != strings.Join(truth, "\n") {
		t.Errorf("timeline:\n%s\nthe program's record:\n%s", strings.Join(got, "\n"), strings.Join(truth, "\n"))
	}
	code, out, errs = runGoprobe("stat", "--json", "main.(*counter).Inc", "syscalls:sys_enter_connect", "--", bin, fmt.Sprint(n))
	var stat struct {
		Probes []struct {
			Probe string `json:"probe"`
			Count int    `json:"count"`
		} `json:"probes"`
	}
	line := out[strings.Index(out, "{"):]
	if err := json.Unmarshal([]byte(line), &stat); code != 0 || err != nil || len(stat.Probes) != 2 || stat.Probes[0].Count != n || stat.Probes[1].Count != n {
		t.Errorf("stat: exit %d, %v: want %d of each\n%s%s", code, err, n, out, errs)
	}
	for _, def := range []string{"kprobe:tcp_connect", "fentry:tcp_connect"} {
		code, _, errs := runGoprobe("trace", def, "--", bin, "1")
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "tracepoint") {
			t.Errorf("%s: exit %d, %q; want one line saying what works instead", def, code, errs)
		}
	}
	code, _, errs = runGoprobe("trace", "syscalls:sys_enter_connect nosuch", "--", bin, "1")
	if code == 0 || !strings.Contains(errs, "uservaddr") {
		t.Errorf("a misspelled field: exit %d, %q; want the fields named", code, errs)
	}
}

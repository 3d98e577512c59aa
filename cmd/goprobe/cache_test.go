package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProbeCache: probes made with gen --cache from a build with debug
// info trace a stripped copy of it (no symbols, no DWARF) with no --spec,
// with the events tracing the original gives; cache list and remove say
// and do what the cache holds.
func TestProbeCache(t *testing.T) {
	needBPF(t)
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	bin := buildCount(t, "c")
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "--strip-all", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	defs := []string{"maybe_alloc i n", "third i"}
	if code, _, errs := runGoprobe("trace", "-x", stripped, "maybe_alloc i n", "--", stripped, "5"); code == 0 {
		t.Fatalf("the stripped copy has nothing to resolve maybe_alloc by, yet trace ran: %s", errs)
	}
	code, out, errs := runGoprobe(append([]string{"gen", "--cache", "-x", bin}, defs...)...)
	if code != 0 || out != "" || !strings.Contains(errs, "2 probes") {
		t.Fatalf("gen --cache: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	want, wantOut := traced(t, append(defs, "--", bin, "5")...)
	if !strings.Contains(wantOut, "maybe_alloc calls: 15") || len(want) != 15+5 {
		t.Fatalf("tracing the original: %d events\n%s", len(want), wantOut)
	}
	got, _ := traced(t, "-x", stripped, "--", stripped, "5")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the stripped copy traced from the cache:\n%s\nthe original:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	code, out, errs = runGoprobe("stat", "-x", stripped, "maybe_alloc i n", "--", stripped, "5")
	if code != 0 || !strings.Contains(errs, "from the cache") || !strings.Contains(out, "maybe_alloc calls: 15") {
		t.Errorf("stat of one cached probe: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runGoprobe("cache", "list")
	if code != 0 || !strings.Contains(out, bin) || !strings.Contains(out, "\tmaybe_alloc i n\n") || !strings.Contains(out, "\tthird i\n") {
		t.Errorf("cache list: exit %d\n%s", code, out)
	}
	if code, _, errs := runGoprobe("cache", "remove", stripped); code != 0 {
		t.Fatalf("cache remove: %s", errs)
	}
	if code, out, _ := runGoprobe("cache", "list"); code != 0 || out != "" {
		t.Errorf("after remove, cache list: exit %d, %q", code, out)
	}
	code, _, errs = runGoprobe("trace", "-x", stripped, "--", stripped, "5")
	if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "gen --cache") {
		t.Errorf("no probes, none cached: exit %d, %q", code, errs)
	}
}

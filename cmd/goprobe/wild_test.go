package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var ownCount = regexp.MustCompile(`(?m)^count (\S+) (\d+)$`)

// ownCounts is a test program's record: its "count LABEL N" lines.
func ownCounts(t *testing.T, out string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, c := range ownCount.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(c[2])
		m[c[1]] = n
	}
	if len(m) == 0 {
		t.Fatalf("the program printed no counts:\n%s", out)
	}
	return m
}

// TestWildcardTemplateInstances: a wildcard over a C++ class template's
// instances (ns::Tmpl<*>::get) becomes one probe per instance, each
// counting what the program's own per-instance counter says, and none
// for the template's other member or another template's get; *alloc*
// names the two allocators, each counted as the program counts it.
// Each wildcard attaches by one link. goprobe list, given the same
// pattern, lists the same functions.
func TestWildcardTemplateInstances(t *testing.T) {
	needBPF(t)
	bin := buildCXX(t, "tmpl", "-O2", "-g")
	var got map[string]int
	var out string
	// n large enough that the links live for many of mostLinks' samples
	// (some 40,000 calls), not the few milliseconds of a short run.
	const n = 3000
	links := mostLinks(t, func() { got, out = statCounts(t, "ns::Tmpl<*>::get", "*alloc*", "--", bin, strconv.Itoa(n)) })
	if links != 2 {
		t.Errorf("the two wildcards held %d BPF links at most, want 2 (one each)", links)
	}
	own := ownCounts(t, out)
	want := map[string]int{
		"ns::Tmpl<int>::get":           own["int"],
		"ns::Tmpl<long>::get":          own["long"],
		"ns::Tmpl<double>::get":        own["double"],
		"ns::Tmpl<unsigned char>::get": own["uchar"],
		"pool_alloc":                   own["pool_alloc"],
		"slab_alloc":                   own["slab_alloc"],
	}
	if own["uchar"] != 4*n || own["slab_alloc"] != 2*n {
		t.Fatalf("the program's own record is not what it was asked to do: %v", own)
	}
	if len(got) != len(want) {
		t.Errorf("%d probes, want %d: %v", len(got), len(want), got)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: counted %d, the program says %d", name, got[name], n)
		}
	}
	code, out, errs := runGoprobe("list", bin, "ns::Tmpl<*>::get")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errs)
	}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		listed = append(listed, strings.TrimPrefix(l, "func "))
	}
	sort.Strings(listed)
	if strings.Join(listed, ";") != "ns::Tmpl<double>::get;ns::Tmpl<int>::get;ns::Tmpl<long>::get;ns::Tmpl<unsigned char>::get" {
		t.Errorf("list matched %q", listed)
	}
	code, _, errs = runGoprobe("list", bin, "ns::Tmpl<*>::gett")
	if code == 0 || !strings.Contains(errs, "(closest: ns::Tmpl<double>::get, ns::Tmpl<int>::get") {
		t.Errorf("list of a pattern that matches nothing: exit %d: %s", code, errs)
	}
}

// TestWildcardRefusals: a pattern that matches nothing fails naming the
// closest functions; one past --max-sites fails before the program runs
// and passes when the bound is raised; --missing-probes warn drops a
// definition that names nothing with a warning and counts the others,
// ignore without one, and error (the default) fails.
func TestWildcardRefusals(t *testing.T) {
	needBPF(t)
	bin := buildCXX(t, "tmpl", "-O2", "-g")
	code, out, errs := runGoprobe("stat", "ns::Tmpl<*>::gett", "--", bin, "3")
	if code == 0 || !strings.Contains(errs, "no function matches ns::Tmpl<*>::gett (closest: ns::Tmpl<double>::get, ns::Tmpl<int>::get") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "count ") {
		t.Errorf("the program ran: %s", out)
	}
	code, out, errs = runGoprobe("stat", "--max-sites", "3", "ns::Tmpl<*>::get", "--", bin, "3")
	if code == 0 || !strings.Contains(errs, "more than 3") || strings.Contains(out, "count ") {
		t.Errorf("--max-sites 3: exit %d: %s%s", code, out, errs)
	}
	if got, _ := statCounts(t, "--max-sites", "4", "ns::Tmpl<*>::get", "--", bin, "3"); len(got) != 4 {
		t.Errorf("--max-sites 4: %v", got)
	}
	for _, policy := range []string{"warn", "ignore"} {
		code, out, errs = runGoprobe("stat", "--json", "--missing-probes", policy, "nosuch", "pool_alloc", "zz*", "--", bin, "3")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", policy, code, errs)
		}
		got, _ := statOf(t, out)
		own := ownCounts(t, out)
		if len(got) != 1 || got["pool_alloc"] != own["pool_alloc"] || own["pool_alloc"] != 3 {
			t.Errorf("%s: counted %v, the program says %v", policy, got, own)
		}
		warned := strings.Count(errs, "warning:")
		if policy == "warn" && (warned != 2 || !strings.Contains(errs, "no function nosuch") || !strings.Contains(errs, "no function matches zz*")) ||
			policy == "ignore" && warned != 0 {
			t.Errorf("%s: %s", policy, errs)
		}
	}
	code, _, errs = runGoprobe("stat", "nosuch", "pool_alloc", "--", bin, "3")
	if code == 0 || !strings.Contains(errs, "no function nosuch") {
		t.Errorf("missing-probes error: exit %d: %s", code, errs)
	}
}

// TestWildcardUSDT: usdt:demo:* names the program's three USDT probes,
// one probe each, counted as the program's own record says: tick once per
// call and once more at the end, work once per call of the guarded
// branch, sum once per sum line it printed.
func TestWildcardUSDT(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "sdt", "-O2", "-g")
	const n = 12
	got, out := statCounts(t, "usdt:*:*", "--", bin, strconv.Itoa(n))
	works := len(enabledWork.FindAllString(out, -1))
	sums := len(regexp.MustCompile(`(?m)^sum\(.*\)$`).FindAllString(out, -1))
	want := map[string]int{"usdt:demo:tick": n + 1, "usdt:demo:work": works, "usdt:demo:sum": sums}
	if works != n || sums == 0 || len(got) != len(want) {
		t.Fatalf("probes %v; the program ran work's branch %d times and printed %d sums\n%s", got, works, sums, out)
	}
	for name, c := range want {
		if got[name] != c {
			t.Errorf("%s: counted %d, want %d", name, got[name], c)
		}
	}
	// A filter on a USDT operand and a builtin: the ticks past 5.
	def := `usdt:demo:tick /arg0 > 5 && $comm == "sdt"/`
	if got, _ := statCounts(t, def, "--", bin, strconv.Itoa(n)); got[def] != n-5 {
		t.Errorf("%s: counted %d, want %d of the ticks 0..%d", def, got[def], n-5, n)
	}
}

// TestWildcardGo: main.* names every function of a Go program's package
// main, its inlined twice too, each counted as the program says.
func TestWildcardGo(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "go")
	got, out := statCounts(t, "main.*", "--", bin, "3")
	var said int
	if m := regexp.MustCompile(`twice calls: (\d+)`).FindStringSubmatch(out); m != nil {
		said, _ = strconv.Atoi(m[1])
	}
	want := map[string]int{"main.main": 1, "main.work": 1, "main.twice": said}
	if said != 10 || len(got) != len(want) {
		t.Fatalf("probes %v; the program says twice ran %d times\n%s", got, said, out)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: counted %d, want %d", name, got[name], n)
		}
	}
}

// TestWildcardLibrary: LIB:PATTERN probes the library of that name the
// command loads (the C library by its soname): getpi? and prctl count
// what the program's own record says it called: getpid once per thread
// it reports, prctl once per report and once more per thread it named.
func TestWildcardLibrary(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	got, out := statCounts(t, "libc.so.6:getpi?", "libc.so.6:prctl", "--", bin, "2")
	rec := whoSaid(t, out, 2)
	named := 0
	for _, name := range rec.names {
		if name != "who" {
			named++
		}
	}
	if want := map[string]int{"getpid": len(rec.names), "prctl": len(rec.names) + named}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counted %v, the program's record says %v", got, want)
	}
	code, out, errs := runGoprobe("list", bin, "libc.so.6:getpi?")
	if code != 0 || strings.TrimSpace(out) != "func getpid" {
		t.Errorf("list libc.so.6:getpi?: exit %d: %s%s", code, out, errs)
	}
	// A wildcard over a real library: with --missing-probes warn, a
	// function whose sites the proof refuses is left out, not the run.
	got, _ = statCounts(t, "--missing-probes", "warn", "libc.so.6:*alloc*", "--", bin, "2")
	if len(got) < 50 {
		t.Errorf("libc.so.6:*alloc*: %d probes, want the C library's allocators: %v", len(got), got)
	}
	code, _, errs = runGoprobe("stat", "libnosuch.so:f", "--", bin, "2")
	if code == 0 || !strings.Contains(errs, "loads no such library") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

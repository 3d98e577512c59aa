package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// whoFilters are filters on the who program's hit, each with the same
// predicate over its own record of a call, in C's arithmetic: long x,
// int y (signed), unsigned u, char *tag, it->level an unsigned char,
// it->name a char[8].
var whoFilters = []struct {
	filter string
	holds  func(c whoCall, comm string) bool
}{
	{"x > 3", func(c whoCall, _ string) bool { return c.x > 3 }},
	{"x < 0", func(c whoCall, _ string) bool { return c.x < 0 }},
	{"y < 0", func(c whoCall, _ string) bool { return c.y < 0 }},           // int, sign-extended
	{"u > 100", func(c whoCall, _ string) bool { return c.u > 100 }},       // unsigned: 0xfffffff1 is large
	{"y < u", func(c whoCall, _ string) bool { return uint64(c.y) < c.u }}, // C: y converts to unsigned
	{"x <= -3 || x >= 12", func(c whoCall, _ string) bool { return c.x <= -3 || c.x >= 12 }},
	{"!(x == 5) && y != 0", func(c whoCall, _ string) bool { return c.x != 5 && c.y != 0 }},
	{"x % 3 == -1 || -x > 4", func(c whoCall, _ string) bool { return c.x%3 == -1 || -c.x > 4 }},
	{"(x * 2 + y) / 3 < 2", func(c whoCall, _ string) bool { return (c.x*2+c.y)/3 < 2 }},
	{"x >> 1 == -2", func(c whoCall, _ string) bool { return c.x>>1 == -2 }},
	{"(x & 6) == 2 || (x | 1) == 9 || (x ^ 3) == 1 || 1 << 3 == x", func(c whoCall, _ string) bool {
		return c.x&6 == 2 || c.x|1 == 9 || c.x^3 == 1 || 8 == c.x
	}},
	{"~x == 4", func(c whoCall, _ string) bool { return ^c.x == 4 }},
	{"it->level > 100", func(c whoCall, _ string) bool { return c.level > 100 }},
	{"it->id == 3 || it->id == 6", func(c whoCall, _ string) bool { return c.id == 3 || c.id == 6 }},
	{`tag == "red"`, func(c whoCall, _ string) bool { return c.tag == "red" }},
	{`tag != "red" && x >= -2`, func(c whoCall, _ string) bool { return c.tag != "red" && c.x >= -2 }},
	{`tag == "re"`, func(c whoCall, _ string) bool { return false }}, // a prefix is not the text
	{`it->name == "n1"`, func(c whoCall, _ string) bool { return c.name == "n1" }},
	{`$comm == "who-a" && x > 0`, func(c whoCall, comm string) bool { return comm == "who-a" && c.x > 0 }},
}

// TestFilter: each filter, evaluated in BPF, counts exactly the calls the
// program's own record says it holds for (stat), and trace prints exactly
// those calls; a definition's /PRED/ and --filter both hold.
func TestFilter(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 25
	some := 0
	for _, f := range whoFilters {
		def := "hit /" + f.filter + "/"
		got, out := statCounts(t, def, "--", bin, strconv.Itoa(n))
		rec := whoSaid(t, out, n)
		want := rec.holding(f.holds)
		if want > 0 && want < len(rec.calls) {
			some++
		}
		if got[def] != want {
			t.Errorf("%s: counted %d, the program's record holds %d of %d calls", f.filter, got[def], want, len(rec.calls))
		}
	}
	if some < len(whoFilters)-2 {
		t.Errorf("only %d filters split the calls: the test proves little", some)
	}
	code, out, errs := runGoprobe("trace", "--filter", "u > 100", "hit /x > 3/ x u", "--", bin, strconv.Itoa(n))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rec := whoSaid(t, out, n)
	var want, got []string
	for _, c := range rec.calls {
		if c.x > 3 && c.u > 100 {
			want = append(want, fmt.Sprintf("%d x=%d u=%d", c.tid, c.x, c.u))
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\d+/(\d+) hit site=entry (x=\S+ u=\S+)$`).FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	if len(want) == 0 || strings.Join(sorted(got), "\n") != strings.Join(sorted(want), "\n") {
		t.Errorf("trace printed:\n%s\nthe calls with x > 3 and u > 100:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	code, out, errs = runGoprobe("hist", "--json", "--key", "$comm", "hit /x > 3/", "--", bin, strconv.Itoa(n))
	if code != 0 {
		t.Fatalf("hist: exit %d: %s", code, errs)
	}
	rec = whoSaid(t, out, n)
	keyed := map[string]uint64{}
	for _, c := range rec.calls {
		if c.x > 3 {
			keyed[rec.names[c.tid]]++
		}
	}
	if hist := histCounts(t, out); fmt.Sprint(hist) != fmt.Sprint(keyed) {
		t.Errorf("hist --key $comm 'hit /x > 3/': %v, the program's calls with x > 3 per thread %v", hist, keyed)
	}
}

// TestFilterReturn: a filter on $retval at %return (a long the program's
// record gives: x*2 + y + u + tag[0] + it->id) and on a parameter kept
// from the entry counts the calls the record says.
func TestFilterReturn(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 20
	def := "hit%return /$retval > 200 && x < 9/"
	got, out := statCounts(t, def, "--", bin, strconv.Itoa(n))
	rec := whoSaid(t, out, n)
	want := 0
	for _, c := range rec.calls {
		ret := c.x*2 + c.y + int64(c.u) + int64(c.tag[0]) + int64(c.id)
		if ret > 200 && c.x < 9 {
			want++
		}
	}
	if want == 0 || got[def] != want {
		t.Errorf("counted %d, the program's record holds %d of %d", got[def], want, len(rec.calls))
	}
}

// TestFilterGoInline: a filter on a Go function inlined twice reads its
// argument at every inline site: the counts are the program's own
// record of twice's arguments.
func TestFilterGoInline(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "go")
	def := "main.twice /x % 3 != 0 && x > 2/"
	got, out := statCounts(t, def, "--", bin, "3")
	m := regexp.MustCompile(`twice args: \[([\d ]+)\]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no record: %s", out)
	}
	want := 0
	for _, f := range strings.Fields(m[1]) {
		x, _ := strconv.Atoi(f)
		if x%3 != 0 && x > 2 {
			want++
		}
	}
	if want == 0 || got[def] != want {
		t.Errorf("counted %d, the program's arguments hold %d: %s", got[def], want, m[1])
	}
}

// TestFilterErrors: filters that cannot mean anything are refused in one
// line before anything attaches.
func TestFilterErrors(t *testing.T) {
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	for filter, want := range map[string]string{
		"hit /x > /":         "an expression is missing",
		"hit /tag > 3/":      "is text",
		"hit /x == \"a\"/":   "not text",
		"hit /nosuch > 1/":   "nosuch",
		"hit /(x > 1/":       "( without )",
		"hit /x > 1":         "closed by a /",
		"hit /$params > 1/":  "name one",
		"usdt:a:b /x > 1/":   "a USDT probe's are arg0",
		"hit /it->name > 1/": "is text",
		"hit /x > 1/ /":      "expression is missing",
	} {
		code, _, errs := runGoprobe("stat", "--duration", "2s", "-x", bin, filter)
		if code == 0 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d: %q, want one line with %q", filter, code, errs, want)
		}
	}
	code, _, errs := runGoprobe("gen", "--format=perf", "-x", bin, "hit /x > y/")
	if code == 0 || !strings.Contains(errs, "a comparison of two values, which perf's event filter cannot express") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("gen: exit %d: %q", code, errs)
	}
}

// holding is how many of the record's calls holds is true for.
func (r whoRecord) holding(holds func(c whoCall, comm string) bool) int {
	n := 0
	for _, c := range r.calls {
		if holds(c, r.names[c.tid]) {
			n++
		}
	}
	return n
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestFilterTracepoint: a filter on a tracepoint's field and a builtin
// (write(2)s to fd 1 by the thread the program named who-a) counts that
// thread's calls, each of which it flushes in one write of its own.
func TestFilterTracepoint(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 9
	def := `syscalls:sys_enter_write /args->fd == 1 && $comm == "who-a"/`
	got, out := statCounts(t, def, "--", bin, strconv.Itoa(n))
	rec := whoSaid(t, out, n)
	want := 0
	for _, c := range rec.calls {
		if rec.names[c.tid] == "who-a" {
			want++
		}
	}
	if want != n || got[def] != want {
		t.Errorf("counted %d writes by who-a; the program's record has %d calls by it", got[def], want)
	}
}

// TestFilterBpftrace: the filters written as a bpftrace script's
// predicates (gen --format=bpftrace) count, run by bpftrace, exactly the
// calls the program's own record holds them for, as goprobe's do; a
// filter with a signed /, % or >> (which bpftrace 0.17 computes unsigned,
// unlike C) is refused, saying so.
func TestFilterBpftrace(t *testing.T) {
	needBPF(t)
	if _, err := exec.LookPath("bpftrace"); err != nil {
		testutil.Skipf(t, "no bpftrace: %v", err)
	}
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 25
	spelled := 0
	for _, f := range whoFilters {
		def := "hit /" + f.filter + "/"
		code, script, errs := runGoprobe("gen", "--format=bpftrace", "-x", bin, def)
		signedDiv := regexp.MustCompile(`x %|/ 3|x >>`).MatchString(f.filter)
		if signedDiv {
			if code == 0 || !strings.Contains(errs, "which bpftrace 0.17 computes as unsigned") {
				t.Errorf("%s: gen: exit %d: %s", f.filter, code, errs)
			}
			continue
		}
		if code != 0 {
			t.Errorf("%s: gen: exit %d: %s", f.filter, code, errs)
			continue
		}
		spelled++
		bt := filepath.Join(t.TempDir(), "f.bt")
		if err := os.WriteFile(bt, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bpftrace", bt, "-c", bin+" "+strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: bpftrace: %v\n%s\n%s", f.filter, err, script, out)
		}
		rec := whoSaid(t, string(out), n)
		want := rec.holding(f.holds)
		got := 0
		if m := regexp.MustCompile(`(?m)^@\[.*\]: (\d+)$`).FindStringSubmatch(string(out)); m != nil {
			got, _ = strconv.Atoi(m[1])
		}
		if got != want {
			t.Errorf("%s: bpftrace counted %d, the program's record holds %d of %d calls\n%s", f.filter, got, want, len(rec.calls), script[strings.LastIndex(script, "uprobe:"):])
		}
	}
	if spelled < len(whoFilters)-3 {
		t.Errorf("bpftrace ran %d of %d filters", spelled, len(whoFilters))
	}
}

// TestFilterBPFC: the filters written into the bpf-c program (gen
// --format=bpf-c), compiled by clang -target bpf, loaded and attached by
// cilium/ebpf, count exactly the calls the program's own record holds
// them for, as goprobe's own programs do (signed division and remainder,
// text equality included).
func TestFilterBPFC(t *testing.T) {
	needBPF(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 25
	some := 0
	for _, f := range whoFilters {
		t.Run(f.filter, func(t *testing.T) {
			obj, sp := genBPF(t, bin, "hit /"+f.filter+"/")
			coll := loadBPF(t, obj)
			attachBPF(t, coll, bin, sp)
			out, err := exec.Command(bin, strconv.Itoa(n)).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			rec := whoSaid(t, string(out), n)
			want := rec.holding(f.holds)
			if want > 0 && want < len(rec.calls) {
				some++
			}
			var got uint64
			if err := coll.Maps["counts"].Lookup(uint32(0), &got); err != nil {
				t.Fatal(err)
			}
			if got != uint64(want) {
				t.Errorf("counted %d, the program's record holds %d of %d calls", got, want, len(rec.calls))
			}
		})
	}
	if some < len(whoFilters)-2 {
		t.Errorf("only %d filters split the calls: the test proves little", some)
	}
}

// TestFilterPerf: the filters perf's event filter can express (a fetched
// argument compared with a number, a C string or char array with text,
// joined by && || !), written by gen --format=perf as perf stat's
// --filter, count exactly the calls the program's own record holds them
// for; the others are refused in one line naming what perf cannot say
// (or what no generator reads, as $comm).
func TestFilterPerf(t *testing.T) {
	needPerfTools(t)
	bin := buildC(t, "who", "-O2", "-g", "-pthread")
	const n = 25
	spelled := 0
	for _, f := range whoFilters {
		code, script, errs := runGoprobe("gen", "--format=perf", "-x", bin, "hit /"+f.filter+"/")
		if code != 0 {
			if !regexp.MustCompile(`the filter at 0x[0-9a-f]+: .*(perf's event filter cannot express|this generator does not)`).MatchString(errs) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("%s: exit %d: %q", f.filter, code, errs)
			}
			continue
		}
		spelled++
		t.Logf("perf: %s", f.filter)
		out, got := runPerfScript(t, script, bin, strconv.Itoa(n))
		rec := whoSaid(t, out, n)
		if want := rec.holding(f.holds); got[0] != want {
			t.Errorf("%s: perf counted %d, the program's record holds %d of %d calls\n%s", f.filter, got[0], want, len(rec.calls), script)
		}
	}
	if spelled < 10 {
		t.Errorf("perf ran %d of %d filters", spelled, len(whoFilters))
	}
}

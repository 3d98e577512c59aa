package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// coreDef reads a counter's value (valInt, and valBits as a float64), its
// constant labels' count through the counter's labelPairs, which
// client_golang v1.23 moved 8 bytes on (createdTs came before it), and the
// Metric the counter's embedded selfCollector holds (the counter itself:
// a field promoted from an embedded struct).
const coreDef = "github.com/prometheus/client_golang/prometheus.(*counter).Write c->valInt c->valBits:f64 c->labelPairs.len name=c->desc->fqName self=c->self"

// TestCOREOneObject: one bpf-c --core program, generated from the build
// over client_golang v1.11.1 and compiled once, reads a counter's value and
// labels right in that build and in the build over v1.23.2, whose counter
// reflect lays out otherwise, relocated against each build's BTF from
// gopahole --btf_encode_detached. The truth is each program's own report
// after each change (the client's Write, and the counter's address). Loaded against v1.11's BTF, the
// same object reads v1.23's counter wrong: the relocation is what reads it
// right.
func TestCOREOneObject(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "loading BPF needs root")
	}
	bins := map[string]string{"v1.11.1": testutil.Fixture(t, "go-prom-v111").Path, "v1.23.2": testutil.Fixture(t, "go-prom").Path}
	// The premise, from reflect: labelPairs moved.
	off := map[string]int64{}
	for v, bin := range bins {
		off[v] = reflectOffset(t, bin, "github.com/prometheus/client_golang/prometheus.counter", "labelPairs")
	}
	if off["v1.11.1"] == off["v1.23.2"] {
		t.Fatalf("counter.labelPairs at %d in both versions: nothing to relocate", off["v1.11.1"])
	}
	dir := t.TempDir()
	code, src, errs := runGoprobe("gen", "--format=bpf-c", "--core", "-x", bins["v1.11.1"], coreDef)
	if code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	if strings.Contains(src, "_Static_assert(__builtin_offsetof(struct github_com") {
		t.Fatalf("the CO-RE program asserts the generating build's layout:\n%s", src)
	}
	c, obj := filepath.Join(dir, "counter.bpf.c"), filepath.Join(dir, "counter.bpf.o")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-O2", "-g", "-target", "bpf", "-c", c, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s\n%s", err, out, src)
	}
	typesOf := encodeTypes(t, dir, bins)
	for v, bin := range bins {
		t.Run(v, func(t *testing.T) {
			events, said := traceObject(t, obj, typesOf[v], bin)
			if len(said) != 4 || len(events) != len(said) {
				t.Fatalf("%d reads; the program reported %d changes", len(events), len(said))
			}
			for i, e := range events {
				got := fmt.Sprintf("%g %d %s", float64(e.ValInt)+e.ValBits, e.Labels, e.Self)
				if got != said[i] || e.Name != "jobs_total" {
					t.Errorf("change %d: read %s %q; the program says %s", i, got, e.Name, said[i])
				}
			}
		})
	}
	t.Run("unrelocated", func(t *testing.T) {
		events, said := traceObject(t, obj, typesOf["v1.11.1"], bins["v1.23.2"])
		if len(events) != len(said) || len(events) == 0 {
			t.Fatalf("%d reads; the program reported %d changes", len(events), len(said))
		}
		for _, e := range events {
			if e.Labels == 2 {
				t.Errorf("against the other version's types, labelPairs.len still read 2: the test shows no relocation")
			}
		}
	})
}

// coreEvent is one read of coreDef.
type coreEvent struct {
	ValInt  uint64
	ValBits float64
	Labels  int64
	Name    string
	Self    string // the counter's address, from the Metric's data word
}

// traceObject runs bin labeled under the object relocated against the
// BTF file btf: the reads, and the program's own reports ("VALUE LABELS").
func traceObject(t *testing.T, obj, btf, bin string) ([]coreEvent, []string) {
	t.Helper()
	code, out, errs := runGoprobe("trace", "--json", "--bpf-obj", obj, "--btf", btf, "--", bin, "labeled")
	if code != 0 {
		t.Fatalf("trace --bpf-obj: exit %d: %s\n%s", code, errs, out)
	}
	var events []coreEvent
	var said []string
	for _, line := range strings.Split(out, "\n") {
		if m := regexp.MustCompile(`^labeled jobs_total (\S+) (\d+) (0x[0-9a-f]+)$`).FindStringSubmatch(line); m != nil {
			said = append(said, m[1]+" "+m[2]+" "+m[3])
			continue
		}
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e struct {
			Args map[string]json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		var ce coreEvent
		var self string
		for k, dst := range map[string]any{"c->valInt": &ce.ValInt, "c->valBits": &ce.ValBits, "c->labelPairs.len": &ce.Labels, "name": &ce.Name, "self": &self} {
			if err := json.Unmarshal(e.Args[k], dst); err != nil {
				t.Fatalf("%s: %v: %s", k, err, line)
			}
		}
		// *github.com/prometheus/client_golang/prometheus.counter(0xc000123000)
		if typ, addr, ok := strings.Cut(strings.TrimSuffix(self, ")"), "("); ok && typ == "*github.com/prometheus/client_golang/prometheus.counter" {
			ce.Self = addr
		} else {
			ce.Self = "?" + self
		}
		if math.IsNaN(ce.ValBits) {
			t.Fatalf("valBits is not a number: %s", line)
		}
		events = append(events, ce)
	}
	return events, said
}

// reflectOffset is member's offset in typ as the fixture's "truth" mode
// reports it from reflect.
func reflectOffset(t *testing.T, bin, typ, member string) int64 {
	t.Helper()
	out, err := exec.Command(bin, "truth").Output()
	if err != nil {
		t.Fatalf("%s truth: %v", bin, err)
	}
	var ts []testutil.TruthType
	if err := json.Unmarshal(out, &ts); err != nil {
		t.Fatal(err)
	}
	for _, tt := range ts {
		for _, m := range tt.Members {
			if tt.Name == typ && m.Name == member {
				return m.Offset
			}
		}
	}
	t.Fatalf("%s truth: no %s.%s", bin, typ, member)
	return 0
}

// encodeTypes builds gopahole and encodes the BTF of each of bins with
// --btf_encode_detached into dir: the files, by the same keys.
func encodeTypes(t *testing.T, dir string, bins map[string]string) map[string]string {
	t.Helper()
	gopahole := filepath.Join(dir, "gopahole")
	if out, err := exec.Command("go", "build", "-o", gopahole, "../gopahole").CombinedOutput(); err != nil {
		t.Fatalf("building gopahole: %v\n%s", err, out)
	}
	typesOf := map[string]string{}
	for v, bin := range bins {
		typesOf[v] = filepath.Join(dir, v+".btf")
		if out, err := exec.Command(gopahole, "--btf_encode_detached", typesOf[v], bin).CombinedOutput(); err != nil {
			t.Fatalf("gopahole --btf_encode_detached %s: %v\n%s", bin, err, out)
		}
	}
	return typesOf
}

// recSrc is a C program whose struct rec gains a 24-byte member before
// the others when built with -DNEWER; it prints where id lies and, after
// each change, the fields report's probe reads.
const recSrc = `#include <stdio.h>
#include <stddef.h>
struct inner { long pad; int vals[4]; };
struct rec {
#ifdef NEWER
	char tag[24];
#endif
	int id;
	struct inner in;
	union { long l; double d; } u;
};
__attribute__((noinline)) void report(struct rec *r)
{
	printf("report %d %d %ld\n", r->id, r->in.vals[2], r->u.l);
}
int main(void)
{
	static struct rec r;
	printf("offsetof id %zu\n", offsetof(struct rec, id));
	for (int i = 0; i < 3; i++) {
		r.id = 10 + i;
		r.in.vals[2] = 100 * i;
		r.u.l = 7 * i;
		report(&r);
	}
	return 0;
}
`

// TestCOREC: one CO-RE object made from a C program reads a struct's
// member, an element of an array in a nested struct and a union's member
// right in that build and in one whose struct the compiler lays out 24
// bytes further on (its own offsetof), against each build's BTF; the
// truth is each program's own report. Against the first build's BTF, the
// second build reads otherwise.
func TestCOREC(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "loading BPF needs root")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "rec.c")
	if err := os.WriteFile(src, []byte(recSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{"old": filepath.Join(dir, "old"), "new": filepath.Join(dir, "new")}
	for v, flag := range map[string]string{"old": "-DOLDER", "new": "-DNEWER"} {
		if out, err := exec.Command("gcc", "-g", "-O2", flag, "-o", bins[v], src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	code, c, errs := runGoprobe("gen", "--format=bpf-c", "--core", "-x", bins["old"], "report r->id r->in.vals[2] r->u.l")
	if code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	cfile, obj := filepath.Join(dir, "rec.bpf.c"), filepath.Join(dir, "rec.bpf.o")
	if err := os.WriteFile(cfile, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-O2", "-g", "-target", "bpf", "-c", cfile, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s\n%s", err, out, c)
	}
	typesOf := encodeTypes(t, dir, bins)
	offsets := map[string]string{}
	// The last run loads against the other build's types: it must read
	// otherwise than the program says.
	runs := []struct{ v, types string }{{"old", "old"}, {"new", "new"}, {"new", "old"}}
	for _, r := range runs {
		v, bin := r.v, bins[r.v]
		code, out, errs := runGoprobe("trace", "--json", "--bpf-obj", obj, "--btf", typesOf[r.types], "--", bin)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s\n%s", v, code, errs, out)
		}
		var said, read []string
		for _, line := range strings.Split(out, "\n") {
			if off, ok := strings.CutPrefix(line, "offsetof id "); ok {
				offsets[v] = off
			}
			if rest, ok := strings.CutPrefix(line, "report "); ok {
				said = append(said, rest)
			}
			if strings.HasPrefix(line, "{") {
				var e struct {
					Args map[string]int64 `json:"args"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				read = append(read, fmt.Sprintf("%d %d %d", e.Args["r->id"], e.Args["r->in.vals[2]"], e.Args["r->u.l"]))
			}
		}
		if r.types != v {
			if len(read) != 3 || fmt.Sprint(read) == fmt.Sprint(said) {
				t.Errorf("%s against %s's types read %q as the program says: the test shows no relocation", v, r.types, read)
			}
			continue
		}
		if len(said) != 3 || fmt.Sprint(read) != fmt.Sprint(said) {
			t.Errorf("%s: read %q; the program says %q", v, read, said)
		}
	}
	if offsets["old"] == "" || offsets["old"] == offsets["new"] {
		t.Errorf("struct rec's id at %q and %q: nothing relocated", offsets["old"], offsets["new"])
	}
}

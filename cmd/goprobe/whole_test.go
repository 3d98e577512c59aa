package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// wholeEvents runs goprobe trace --json with def and returns each event's
// argument arg (a whole struct, as JSON) and the command's output.
func wholeEvents(t *testing.T, def, arg string, run ...string) ([]map[string]any, string) {
	t.Helper()
	code, out, errs := runGoprobe(append([]string{"trace", "--json", def, "--"}, run...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []map[string]any
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct {
			Args map[string]map[string]any `json:"args"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, e.Args[arg])
	}
	return got, out
}

// wholeFixture builds probe/testdata/whole/NAME.c as its build line says.
func wholeFixture(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	src := filepath.Join(testutil.Root(t), "probe", "testdata", "whole", name+".c")
	if out, err := exec.Command("gcc", "-g", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// TestWholeStructC: 'handle *it' copies a C struct with a union, bitfields,
// a string pointer, a char array and a nested struct in BPF and prints
// every member as the program says it passed them.
func TestWholeStructC(t *testing.T) {
	needBPF(t)
	bin := wholeFixture(t, "item")
	got, out := wholeEvents(t, "handle *it", "*it", bin)
	var said []map[string]string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "id=") {
			continue
		}
		m := map[string]string{}
		for _, kv := range strings.Fields(l) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		said = append(said, m)
	}
	if len(said) != 3 || len(got) != 3 {
		t.Fatalf("%d calls said, %d events:\n%s", len(said), len(got), out)
	}
	compared := 0
	for i, m := range said {
		for k, want := range m {
			var v any = got[i]
			for _, part := range strings.Split(k, ".") {
				obj, _ := v.(map[string]any)
				v = obj[part]
			}
			if fmt.Sprint(v) != want {
				t.Errorf("call %d: %s = %v; the program passed %s", i, k, v, want)
			}
			compared++
		}
	}
	if compared < 30 {
		t.Errorf("only %d members compared", compared)
	}
}

// TestWholeStructGo: '(*counter).Add *c' on client_golang's counter prints
// its members by name; valBits (a float64's bits) plus valInt is the
// counter's value before the call, as the program reported it.
func TestWholeStructGo(t *testing.T) {
	needBPF(t)
	bin := testutil.Fixture(t, "go-prom").Path
	got, out := wholeEvents(t, "github.com/prometheus/client_golang/prometheus.(*counter).Add *c", "*c", bin, "updates")
	var reports []float64
	var methods []string
	for _, m := range regexp.MustCompile(`update requests_total (\w+) (\S+)`).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		reports, methods = append(reports, v), append(methods, m[1])
	}
	var before []float64 // the value before each Add, from the program's reports
	for i, m := range methods {
		if m == "Add" && i > 0 {
			before = append(before, reports[i-1])
		}
	}
	if len(got) != len(before) || len(before) != 6 {
		t.Fatalf("%d Add events; the program made %d Add calls after a report\n%s", len(got), len(before), out)
	}
	for i, c := range got {
		bits, _ := c["valBits"].(float64)
		n, _ := c["valInt"].(float64)
		if v := math.Float64frombits(uint64(bits)) + n; v != before[i] || c["desc"] == nil || c["labelPairs"] == nil {
			t.Errorf("call %d: *c = %v: value %g; the program reported %g before it", i, c, v, before[i])
		}
	}
}

// TestFieldPathValues: a field path ending at a char array prints its text
// up to the NUL (the bytes after it are not NUL), at an int array its
// elements, at a bitfield its bits (signed ones sign-extended), and indexes
// a zero-length and a flexible array member past their declared size; each
// value as the program printed it before the call. A zero-length array
// read whole is refused with advice.
func TestFieldPathValues(t *testing.T) {
	needBPF(t)
	bin := wholeFixture(t, "fields")
	paths := map[string]string{"tag": "f->tag", "v": "f->v", "v[3]": "f->v[3]", "flags": "f->flags", "kind": "f->kind",
		"delta": "f->delta", "wide": "f->wide", "g.a[1]": "g->a[1]", "h.a[2]": "h->a[2]"}
	def := "handle g->a"
	for _, p := range paths {
		def += " " + p
	}
	code, out, errs := runGoprobe("trace", "--json", def, "--", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "g->a: int [0] has no elements of its own; index it ([0])") {
		t.Errorf("g->a read whole: no advice to index it:\n%s", errs)
	}
	var said []map[string]string
	var got []map[string]any
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tag=") {
			m := map[string]string{}
			for _, kv := range strings.Fields(l) {
				k, v, _ := strings.Cut(kv, "=")
				m[k] = v
			}
			said = append(said, m)
		}
		if strings.HasPrefix(l, `{"probe"`) {
			var e struct{ Args map[string]any }
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			got = append(got, e.Args)
		}
	}
	if len(said) != 3 || len(got) != 3 {
		t.Fatalf("%d calls said, %d events:\n%s\n%s", len(said), len(got), out, errs)
	}
	compared := 0
	for i, m := range said {
		if got[i]["g->a"] != nil {
			t.Errorf("call %d: g->a = %v, want null", i, got[i]["g->a"])
		}
		for k, want := range m {
			v := got[i][paths[k]]
			s := fmt.Sprint(v)
			if l, ok := v.([]any); ok {
				var parts []string
				for _, e := range l {
					parts = append(parts, fmt.Sprint(e))
				}
				s = strings.Join(parts, ",")
			}
			if f, ok := v.(float64); ok {
				s = strconv.FormatFloat(f, 'f', -1, 64)
			}
			if s != want {
				t.Errorf("call %d: %s = %v; the program passed %s", i, paths[k], v, want)
			}
			compared++
		}
	}
	if compared != 27 {
		t.Errorf("%d values compared, want 27", compared)
	}
}

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

// TestWholeStructC: 'handle *it' copies a C struct with a union, bitfields,
// a string pointer, a char array and a nested struct in BPF and prints
// every member as the program says it passed them.
func TestWholeStructC(t *testing.T) {
	needBPF(t)
	bin := filepath.Join(t.TempDir(), "item")
	src := filepath.Join(testutil.Root(t), "probe", "testdata", "whole", "item.c")
	if out, err := exec.Command("gcc", "-g", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
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

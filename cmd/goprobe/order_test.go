package main

import (
	"strings"
	"testing"
)

// TestProbeOrderOnOneSite: three probes on one function's entry, given in
// an order that is neither the order of their names nor of their
// arguments, fire in the order given at each of the program's calls (the
// kernel runs the last program attached to a uprobe first).
func TestProbeOrderOnOneSite(t *testing.T) {
	needBPF(t)
	bin := wholeFixture(t, "fields")
	defs := []string{"handle g->n", "handle f->id", "handle h->n"}
	code, out, errs := runGoprobe(append(append([]string{"trace"}, defs...), "--", bin)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	calls := 0
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tag=") {
			calls++
		}
		if i := strings.Index(l, " site=entry "); i >= 0 {
			got = append(got, strings.Fields(l[i:])[1])
		}
	}
	want := []string{"g->n=3", "f->id=", "h->n=3"}
	if calls != 3 || len(got) != 3*calls {
		t.Fatalf("%d events for %d calls the program reported:\n%s", len(got), calls, out)
	}
	for i, g := range got {
		if w := want[i%3]; !strings.HasPrefix(g, w) {
			t.Errorf("event %d of call %d: %s, want %s... (the probes in the order given: %v)", i%3, i/3, g, w, defs)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// histJSON is goprobe hist --json's output.
type histJSON struct {
	Probes []struct {
		Probe string
		Keys  []struct {
			Key     any
			Count   uint64
			Sum     *uint64
			Buckets []struct{ From, To, Count uint64 }
		}
	}
}

// TestHist: counts, sums and log2 buckets aggregated in the kernel per key
// equal those computed from the arguments the program says it passed,
// for a C function inlined three times (numeric key) and for a Go method
// keyed by a Go string read through two pointers.
func TestHist(t *testing.T) {
	needBPF(t)
	bin := buildCount(t, "c")
	code, out, errs := runGoprobe("hist", "--json", "--key", "n", "--value", "i", "maybe_alloc", "--", bin, "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	type agg struct {
		count, sum uint64
		buckets    map[int]uint64
	}
	want := map[string]*agg{}
	for _, m := range regexp.MustCompile(`called maybe_alloc\((\d+), (\d+)\)`).FindAllStringSubmatch(out, -1) {
		i, _ := strconv.ParseUint(m[1], 10, 64)
		a := want[m[2]]
		if a == nil {
			a = &agg{buckets: map[int]uint64{}}
			want[m[2]] = a
		}
		a.count++
		a.sum += i
		a.buckets[bits.Len64(i)]++
	}
	var h histJSON
	if err := json.Unmarshal([]byte(out[strings.LastIndex(out, `{"probes"`):]), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]*agg{}
	for _, k := range h.Probes[0].Keys {
		a := &agg{count: k.Count, sum: *k.Sum, buckets: map[int]uint64{}}
		for _, b := range k.Buckets {
			a.buckets[bits.Len64(b.From)] += b.Count
		}
		got[fmt.Sprint(k.Key)] = a
	}
	show := func(m map[string]*agg) string {
		var parts []string
		for k, a := range m {
			parts = append(parts, fmt.Sprintf("%s:%+v", k, *a))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	if len(want) != 3 || show(want) != show(got) {
		for k, a := range want {
			t.Logf("want %s: %+v", k, *a)
		}
		for k, a := range got {
			t.Logf("got  %s: %+v", k, *a)
		}
		t.Errorf("aggregates differ:\n%s", out)
	}

	b := testutil.Fixture(t, "go-prom")
	code, out, errs = runGoprobe("hist", "--json", "--key", "c->desc->fqName",
		"github.com/prometheus/client_golang/prometheus.(*counter).Inc", "--", b.Path, "updates")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	incs := strings.Count(out, "update requests_total Inc ") + 1 // and main's own
	h = histJSON{}
	if err := json.Unmarshal([]byte(out[strings.LastIndex(out, `{"probes"`):]), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(h.Probes[0].Keys) != 1 || h.Probes[0].Keys[0].Key != "requests_total" || h.Probes[0].Keys[0].Count != uint64(incs) {
		t.Errorf("want requests_total counted %d times: %s", incs, out)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// valueBuilds are the compilers and options the values fixture is built
// with: -O0 keeps parameters in frame slots the prologue fills (the entry
// probe moves past it), -O2 leaves them in registers whose upper halves
// an int does not define.
var valueBuilds = [][]string{{"gcc", "-O0"}, {"gcc", "-O2"}, {"clang", "-O2"}}

// buildValues builds testdata/values.c with cc and opt.
func buildValues(t *testing.T, cc, opt string) string {
	t.Helper()
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "values.c")
	return buildWith(t, t.TempDir(), cc, opt, "-g", "-o", "BIN", src)
}

// records are the program's own "rec FUNC V..." lines, per function.
func records(out string) map[string][][]string {
	m := map[string][][]string{}
	for _, l := range strings.Split(out, "\n") {
		fs := strings.Fields(l)
		if len(fs) >= 2 && fs[0] == "rec" {
			m[fs[1]] = append(m[fs[1]], fs[2:])
		}
	}
	return m
}

// TestHistSigned: hist --value of a negative int sums it as the signed
// value it is, and counts it below zero, per key (a short, negative too),
// as the program's own record of the values it passed says; in each
// build, where the int sits in a frame slot or in a register whose upper
// half the caller left undefined.
func TestHistSigned(t *testing.T) {
	needBPF(t)
	for _, b := range valueBuilds {
		t.Run(b[0]+b[1], func(t *testing.T) {
			bin := buildValues(t, b[0], b[1])
			code, out, errs := runGoprobe("hist", "--json", "--key", "k", "--value", "v", "neg", "--", bin, "40")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			type agg struct {
				Count, Negative uint64
				Sum             int64
				Buckets         map[int]uint64
			}
			want := map[string]*agg{}
			negs := 0
			for _, r := range records(out)["neg"] {
				v, _ := strconv.ParseInt(r[0], 10, 64)
				a := want[r[1]]
				if a == nil {
					a = &agg{Buckets: map[int]uint64{}}
					want[r[1]] = a
				}
				a.Count++
				a.Sum += v
				if v < 0 {
					a.Negative++
					negs++
				} else {
					a.Buckets[bits.Len64(uint64(v))]++
				}
			}
			if len(want) != 3 || negs < 10 {
				t.Fatalf("want 3 keys and 10 negative values in the record, have %d and %d:\n%s", len(want), negs, out)
			}
			var h struct {
				Probes []struct {
					Keys []struct {
						Key      json.Number
						Count    uint64
						Sum      int64
						Negative uint64
						Buckets  []struct{ From, To, Count uint64 }
					}
				}
			}
			dec := json.NewDecoder(strings.NewReader(out[strings.LastIndex(out, `{"probes"`):]))
			dec.UseNumber()
			if err := dec.Decode(&h); err != nil || len(h.Probes) != 1 {
				t.Fatalf("%v\n%s", err, out)
			}
			got := map[string]*agg{}
			for _, k := range h.Probes[0].Keys {
				a := &agg{Count: k.Count, Sum: k.Sum, Negative: k.Negative, Buckets: map[int]uint64{}}
				for _, bk := range k.Buckets {
					a.Buckets[bits.Len64(bk.From)] += bk.Count
				}
				got[k.Key.String()] = a
			}
			for k, w := range want {
				g := got[k]
				if g == nil || fmt.Sprint(*g) != fmt.Sprint(*w) {
					t.Errorf("key %s: want %+v, got %+v", k, w, g)
				}
			}
			if len(got) != len(want) {
				t.Errorf("keys %v, want %v", keysOf(got), keysOf(want))
			}
		})
	}
}

func keysOf[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestTraceValues: the values goprobe trace prints are those the program
// says it passed: a negative int and short; the long after an unsigned
// __int128, and two longs on the stack after three of them, read where the
// probe is (at -O0 past the prologue, which moves the stack pointer the
// entry's locations count from); a char * printed up to its NUL, and a
// char[8] without one printed as its 8 bytes. The 16-byte integer itself
// prints as ?, with the reason (no number type holds it, or where it is
// not), never as its low half.
func TestTraceValues(t *testing.T) {
	needBPF(t)
	defs := []string{"neg v k", "f a b", "h a d e", "str a:string n->name", "str a n->name:string"}
	for _, b := range valueBuilds {
		t.Run(b[0]+b[1], func(t *testing.T) {
			bin := buildValues(t, b[0], b[1])
			code, out, errs := runGoprobe(append(append([]string{"trace", "--json"}, defs...), "--", bin, "6")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			rec := records(out)
			// What each definition prints, by the record: the
			// arguments it names, in its order, "?" for a.
			want := map[string][]string{}
			for _, r := range rec["neg"] {
				want["neg v k"] = append(want["neg v k"], r[0]+" "+r[1])
			}
			for _, r := range rec["f"] {
				want["f a b"] = append(want["f a b"], "? "+r[0])
			}
			for _, r := range rec["h"] {
				want["h a d e"] = append(want["h a d e"], "? "+r[0]+" "+r[1])
			}
			for _, r := range rec["str"] {
				want["str a:string n->name"] = append(want["str a:string n->name"], r[0]+" "+r[1])
				want["str a n->name:string"] = append(want["str a n->name:string"], r[0]+" "+r[1])
			}
			got := map[string][]string{}
			names := regexp.MustCompile(`[a-z>-]+`)
			for _, l := range strings.Split(out, "\n") {
				if !strings.HasPrefix(l, `{"probe"`) {
					continue
				}
				var e struct {
					Probe string
					Args  map[string]any
				}
				dec := json.NewDecoder(bytes.NewReader([]byte(l)))
				dec.UseNumber()
				if err := dec.Decode(&e); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				var vs []string
				for _, a := range strings.Fields(e.Probe)[1:] {
					v := e.Args[names.FindString(a)]
					if v == nil {
						v = "?"
					}
					vs = append(vs, fmt.Sprint(v))
				}
				got[e.Probe] = append(got[e.Probe], strings.Join(vs, " "))
			}
			for _, d := range defs {
				w, g := want[d], got[d]
				sort.Strings(w)
				sort.Strings(g)
				if len(w) != 6 || strings.Join(w, "|") != strings.Join(g, "|") {
					t.Errorf("%s: want %q, got %q", d, w, g)
				}
			}
			if !regexp.MustCompile(`f a b: entry site at 0x[0-9a-f]+ in f: a: `).MatchString(errs) {
				t.Errorf("no reason given for the 16-byte a: %s", errs)
			}
		})
	}
}

// TestHistSignedMetric: hist --listen exports a negative int's sum per key
// as the signed sum it is: NAME_sum and NAME_count of each key, scraped
// after the program ran, are those of the values the program says it
// passed.
func TestHistSignedMetric(t *testing.T) {
	needBPF(t)
	bin := buildValues(t, "gcc", "-O2")
	agent, stderr := startAgent(t, buildGoprobe(t, t.TempDir()), "hist", "--listen", "127.0.0.1:0", "-x", bin,
		"--key", "k", "--value", "v", "--metric", "neg_values", "--label", "k", "neg")
	// 20 calls: each key's sum is below zero.
	out, err := exec.Command(bin, "20").Output()
	if err != nil {
		t.Fatal(err)
	}
	sums, counts := map[string]int64{}, map[string]int{}
	for _, r := range records(string(out))["neg"] {
		v, _ := strconv.ParseInt(r[0], 10, 64)
		sums[r[1]] += v
		counts[r[1]]++
	}
	if len(sums) != 3 || sums["-1"] >= 0 || sums["0"] >= 0 || sums["1"] >= 0 {
		t.Fatalf("want 3 keys, each with a sum below zero, in the record: %v", sums)
	}
	for k, want := range sums {
		series := `neg_values_count{k="` + k + `"}`
		var got string
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if got = scrape(t, agent, series); got == strconv.Itoa(counts[k]) {
				break
			}
		}
		if got != strconv.Itoa(counts[k]) {
			t.Errorf("%s = %q, want %d:\n%s", series, got, counts[k], stderr())
			continue
		}
		sum, err := strconv.ParseFloat(scrape(t, agent, `neg_values_sum{k="`+k+`"}`), 64)
		if err != nil || sum != float64(want) {
			t.Errorf(`neg_values_sum{k="%s"} = %v (%v), want %d`, k, sum, err, want)
		}
	}
}

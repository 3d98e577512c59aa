package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestTraceSplitDWARF traces a program whose debug info is split DWARF,
// read from its .dwo files and from its .dwp package, of DWARF 5 and of
// DWARF 4's GNU extension, and the same program built without it: record_visit's arguments, a field path through a
// pointer parameter, a string and a global variable read by name
// (split_total, in a PIE), equal the program's own record of each call, in
// order, for every call. A string the probe could not read (the first
// touch of a page) may be null, never another value.
func TestTraceSplitDWARF(t *testing.T) {
	needBPF(t)
	bin := testutil.Fixture(t, "c-split").Path
	var bins []string
	for _, b := range []string{"c-split", "c-split-dwp", "c-split-plain", "c-split4", "c-split4-dwp"} {
		bins = append(bins, filepath.Join(filepath.Dir(bin), b))
	}
	for _, b := range bins {
		t.Run(filepath.Base(b), func(t *testing.T) {
			const calls = 40
			code, out, errs := runGoprobe("trace", "--json", "record_visit v->id v->weight step tag split_total", "--", b, fmt.Sprint(calls))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var want, got []string
			nulls := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "record_visit ") {
					want = append(want, l)
				}
				if !strings.HasPrefix(l, "{") {
					continue
				}
				var ev struct {
					Args struct {
						ID     *int64  `json:"v->id"`
						Weight *int64  `json:"v->weight"`
						Step   *int64  `json:"step"`
						Tag    *string `json:"tag"`
						Total  *int64  `json:"split_total"`
					}
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				a := ev.Args
				if a.ID == nil || a.Weight == nil || a.Step == nil || a.Total == nil {
					t.Fatalf("an argument missing: %s", l)
				}
				tag := "?"
				if a.Tag != nil {
					tag = *a.Tag
				} else {
					nulls++
				}
				got = append(got, fmt.Sprintf("record_visit id=%d weight=%d step=%d tag=%s total=%d", *a.ID, *a.Weight, *a.Step, tag, *a.Total))
			}
			if len(want) != calls || len(got) != calls {
				t.Fatalf("%d events, the program recorded %d calls, want %d each", len(got), len(want), calls)
			}
			if nulls > 1 {
				t.Errorf("%d of %d strings unread", nulls, calls)
			}
			for i := range want {
				g := got[i]
				if strings.Contains(g, "tag=? ") { // unread: take the program's
					w := want[i][strings.Index(want[i], "tag=")+4:]
					g = strings.Replace(g, "?", w[:strings.IndexByte(w, ' ')], 1)
				}
				if g != want[i] {
					t.Errorf("call %d: traced %q, the program says %q", i, got[i], want[i])
				}
			}
		})
	}
}

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
// read from its .dwo files and from its .dwp package: record_visit's
// arguments, a field path through a pointer parameter and a string, equal
// the program's own record of each call, in order, for every call. A
// string the probe could not read (the first touch of a page) may be null,
// never another value.
func TestTraceSplitDWARF(t *testing.T) {
	needBPF(t)
	bin := testutil.Fixture(t, "c-split").Path
	for _, b := range []string{bin, filepath.Join(filepath.Dir(bin), "c-split-dwp")} {
		t.Run(filepath.Base(b), func(t *testing.T) {
			const calls = 40
			code, out, errs := runGoprobe("trace", "--json", "record_visit v->id v->weight step tag", "--", b, fmt.Sprint(calls))
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
					}
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				a := ev.Args
				if a.ID == nil || a.Weight == nil || a.Step == nil {
					t.Fatalf("an argument missing: %s", l)
				}
				tag := "?"
				if a.Tag != nil {
					tag = *a.Tag
				} else {
					nulls++
				}
				got = append(got, fmt.Sprintf("record_visit id=%d weight=%d step=%d tag=%s", *a.ID, *a.Weight, *a.Step, tag))
			}
			if len(want) != calls || len(got) != calls {
				t.Fatalf("%d events, the program recorded %d calls, want %d each", len(got), len(want), calls)
			}
			if nulls > 1 {
				t.Errorf("%d of %d strings unread", nulls, calls)
			}
			for i := range want {
				g := got[i]
				if strings.HasSuffix(g, "tag=?") {
					g = strings.TrimSuffix(g, "?") + want[i][strings.LastIndex(want[i], "=")+1:]
				}
				if g != want[i] {
					t.Errorf("call %d: traced %q, the program says %q", i, got[i], want[i])
				}
			}
		})
	}
}

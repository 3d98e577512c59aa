package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestSharedSitesCookie: the eight inline sites of testdata/sites.c run
// one program through one link, and each event learns its site from the
// attach cookie. Each event's site address must lie in the function the
// symbol table says holds it, with the argument the program says it
// passed there, and every function must have its event.
func TestSharedSitesCookie(t *testing.T) {
	needBPF(t)
	const n = 8
	bin := buildC(t, "sites", "-O2", "-g")
	syms := testutil.FuncSymbols(t, bin)
	code, out, errs := runGoprobe("trace", "--json", "hit k", "--", bin)
	if code != 0 {
		t.Fatalf("goprobe trace: exit %d: %s", code, errs)
	}
	passed := map[string]string{} // the program's record: function -> argument
	for _, l := range strings.Split(out, "\n") {
		if name, v, ok := strings.Cut(l, " "); ok && strings.HasPrefix(name, "site_") {
			passed[name] = v
		}
	}
	if len(passed) != n {
		t.Fatalf("the program recorded %d calls, want %d:\n%s", len(passed), n, out)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, `{"probe"`) {
			continue
		}
		var e struct {
			Addr string
			Args map[string]any
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		a, err := strconv.ParseUint(e.Addr, 0, 64)
		if err != nil {
			t.Fatalf("event %s: addr: %v", l, err)
		}
		in := ""
		for _, s := range syms {
			if a >= s.Value && a < s.Value+s.Size && strings.HasPrefix(s.Name, "site_") {
				in = s.Name
			}
		}
		if k := fmt.Sprint(e.Args["k"]); in == "" || passed[in] != k {
			t.Errorf("event at %s (in %q) has k=%s; the program passed %q there", e.Addr, in, k, passed[in])
		}
		seen[in] = true
	}
	if len(seen) != n {
		t.Errorf("events at %d of the %d functions:\n%s", len(seen), n, out)
	}
}

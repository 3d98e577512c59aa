package gen

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestPairEvents: an event takes its statement's earliest call left, one
// of no statement the earliest call of a statement its known events do
// not cover (go seed 2273: fn10's line-169 expansion holds an instruction
// both calls share, so its site fires before line 168's).
func TestPairEvents(t *testing.T) {
	s168, s169, sRoot := stmt{10, 0}, stmt{10, 1}, stmt{-1, 0}
	for _, c := range []struct {
		name       string
		evs, calls []stmt
		want       []int
	}{
		{"in order", []stmt{s168, s169, s168, s169}, []stmt{s168, s169, s168, s169}, []int{0, 1, 2, 3}},
		{"crosswise", []stmt{s169, s168, s169, s168}, []stmt{s168, s169, s168, s169}, []int{1, 0, 3, 2}},
		{"entry site", []stmt{noStmt, s169, s168, noStmt}, []stmt{sRoot, s168, s169, sRoot}, []int{0, 2, 1, 3}},
		{"no evidence", []stmt{noStmt, noStmt, noStmt}, []stmt{s168, s169, s168}, []int{0, 1, 2}},
	} {
		if got := pairEvents(c.evs, c.calls); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStatements: each language's source gives every call statement a
// line, and a program's record parses whole into the statements that made
// its calls, main's calls of the roots n times each.
func TestStatements(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 1004, 2273} {
		p := Generate(seed).Guarded()
		for _, l := range []Lang{C, Go, Rust, Zig} {
			lines, ok := p.callLines(p.Source(l))
			n := len(p.Roots)
			for _, f := range p.Funcs {
				n += len(f.Calls)
			}
			if !ok || len(lines) != n {
				t.Errorf("seed %d %s: %d call lines of %d (%v)", seed, l, len(lines), n, ok)
			}
		}
	}
	for _, b := range []string{"gcc-O3", "go", "rust-O3"} {
		build, _ := BuildNamed(b)
		if _, err := exec.LookPath(build.Tool()); err != nil {
			testutil.Skipf(t, "%s not found", build.Tool())
		}
		for _, seed := range []int64{1004, 2273} {
			p := Generate(seed).Guarded()
			bin, err := build.Make(p, filepath.Join(t.TempDir(), b))
			if err != nil {
				t.Fatal(err)
			}
			r, err := runRecord(bin, filepath.Dir(bin), "t", []string{"5"})
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*Func{}
			for _, f := range p.Funcs {
				byName[f.Name] = f
			}
			seq, ok := p.statements(r.Seq, func(fn string, k int) (int64, bool) {
				vs := r.Values[fn][byName[fn].Params[0].Name]
				return vs[min(k, len(vs)-1)], k < len(vs)
			}, build.Lang)
			if !ok || len(seq) != len(r.Seq) || len(seq) < 5*len(p.Roots) {
				t.Fatalf("%s seed %d: record of %d calls parsed %v (%d)", b, seed, len(r.Seq), ok, len(seq))
			}
			roots := 0
			for k, s := range seq {
				if p.Funcs[p.callee(s)].Name != r.Seq[k] {
					t.Errorf("%s seed %d: call %d of %s by %v, which calls %s", b, seed, k, r.Seq[k], s, p.Funcs[p.callee(s)].Name)
				}
				if s.caller < 0 {
					roots++
				}
			}
			if roots != 5*len(p.Roots) {
				t.Errorf("%s seed %d: %d calls by main, want %d", b, seed, roots, 5*len(p.Roots))
			}
			lines, _ := p.callLines(p.Source(build.Lang))
			exps, err := p.expansions(bin, lines)
			if err != nil {
				t.Fatal(err)
			}
			known := 0
			for _, x := range exps {
				if x.s != noStmt {
					known++
				}
			}
			// The programs inline most calls (Go, Rust -O3, GCC -O3).
			if known < 5 {
				t.Errorf("%s seed %d: %d of %d expansions at a call statement's line", b, seed, known, len(exps))
			}
		}
	}
}

package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// testSeeds are small programs that exercise loops around inline
// expansions, clones, splits and Go methods; seed 1 holds minimal
// reproducers (see WriteFailures' output in the log).
var testSeeds = []int64{1, 2, 3}

// TestGenerate: the same seed gives the same program, every language's
// source names every function, and a program's calls stay within the ring.
func TestGenerate(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 42, 1000} {
		a, b := Generate(seed), Generate(seed)
		for _, l := range []Lang{C, Go, Rust, Zig} {
			sa, sb := a.Source(l), b.Source(l)
			if sa != sb {
				t.Fatalf("seed %d %s: two sources", seed, l)
			}
			for _, f := range a.Funcs {
				if !strings.Contains(sa, f.Name+"(") {
					t.Errorf("seed %d %s: no %s", seed, l, f.Name)
				}
			}
		}
		if a.MaxN() < 20 {
			t.Errorf("seed %d: MaxN %d", seed, a.MaxN())
		}
		if len(a.Roots) == 0 {
			t.Errorf("seed %d: no root", seed)
		}
	}
}

// TestRecordValues: every program a test probes records what its calls
// passed, in each language; a parameter recorded by its callers (unused)
// is there too.
func TestRecordValues(t *testing.T) {
	for _, b := range []string{"gcc-O2", "go"} {
		build, _ := BuildNamed(b)
		if _, err := exec.LookPath(build.Tool()); err != nil {
			testutil.Skipf(t, "%s not found", build.Tool())
		}
		p := Generate(1)
		bin, err := build.Make(p, filepath.Join(t.TempDir(), b))
		if err != nil {
			t.Fatal(err)
		}
		r, err := runRecord(bin, filepath.Dir(bin), "t", []string{"3"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ri := range p.Roots {
			f := p.Funcs[ri]
			if r.Calls[f.Name] != 3 {
				t.Errorf("%s: root %s: %d calls, want 3", b, f.Name, r.Calls[f.Name])
			}
			// main passes i*(j+3)+j to parameter j: 0..2 for i = 0.
			for j, pa := range f.Params {
				if got := r.Values[f.Name][pa.Name]; len(got) != 3 || got[0] != int64(j) {
					t.Errorf("%s: %s %s = %v", b, f.Name, pa.Name, got)
				}
			}
		}
	}
}

// TestExact probes every function of a few generated programs (gcc -O2 and
// Go) with goprobe stat and trace, and compares with each program's record.
// A printed argument value that no call passed fails the test: a wrong
// value is worse than a missing one. Every count must be exact, stat's
// and trace's: a probe fires once per call, inlined (in unrolled loops
// too), cloned or not. GCC describes many arguments of these programs as
// DWARF expressions (a caller's b*3+1 passed to an expansion, an entry
// value, a removed clone parameter): at least 40 values are read through
// one, and each is the program's. The log holds the tables and any
// inexact function.
func TestExact(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "probing needs root")
	}
	for _, tool := range []string{"gcc", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			testutil.Skipf(t, "%s not found", tool)
		}
	}
	goprobe := filepath.Join(t.TempDir(), "goprobe")
	cmd := exec.Command("go", "build", "-o", goprobe, "./cmd/goprobe")
	cmd.Dir = testutil.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build goprobe: %v\n%s", err, out)
	}
	var all []*Result
	exprValues := 0
	for _, b := range []string{"gcc-O2", "go"} {
		build, _ := BuildNamed(b)
		for _, seed := range testSeeds {
			p := Generate(seed)
			r, err := Run(p, build, filepath.Join(t.TempDir(), b), min(5, p.MaxN()), Tools{Goprobe: goprobe})
			if err != nil {
				t.Fatalf("%s seed %d: %v", b, seed, err)
			}
			all = append(all, r)
			for _, fr := range r.Funcs {
				if b == "gcc-O2" {
					exprValues += fr.ExprValues
				}
				if fr.Wrong > 0 {
					t.Errorf("%s seed %d %s: %d of %d values wrong, e.g. %s; sites %s",
						b, seed, fr.Symbol, fr.Wrong, fr.Values, fr.WrongEx, fr.Sites)
				}
				if c := fr.Class(); c != "" {
					t.Errorf("%s seed %d %s (%s, %s): %s: want %d, goprobe stat %d, trace %d; sites %s",
						b, seed, fr.Symbol, fr.Kind, fr.Shape, c, fr.Want, fr.Goprobe, fr.Trace, fr.Sites)
				}
			}
		}
	}
	if exprValues < 40 {
		t.Errorf("gcc-O2: %d values read through DWARF expressions, want at least 40", exprValues)
	}
	var buf bytes.Buffer
	WriteTable(&buf, Summarize(all))
	buf.WriteString("\n")
	WriteReasons(&buf, all)
	buf.WriteString("\n")
	WriteFailures(&buf, all)
	t.Logf("\n%s", buf.String())
}

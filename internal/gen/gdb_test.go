package gen

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestUnreadableAgreesWithGDB: where goprobe prints ? because the debug
// info has no location for an argument at a site (the reason class "no
// location"), gdb, with a breakpoint at that very instruction that reads
// the argument in the frame of that function (the inline frame at an
// expansion) at every pass of a run, has no value for it either: it
// prints <optimized out>, or lists no such argument. A ? is then what the
// debug info says, not a value goprobe failed to find. At least 40
// arguments at sites of clang -O2, gcc -O3, Go and Rust builds are
// compared (gdb lists a Go or Rust expansion's parameters from its
// abstract origin, as <optimized out>, where the DIE has none).
func TestUnreadableAgreesWithGDB(t *testing.T) {
	if _, err := exec.LookPath("gdb"); err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	goprobe := filepath.Join(t.TempDir(), "goprobe")
	cmd := exec.Command("go", "build", "-o", goprobe, "./cmd/goprobe")
	cmd.Dir = testutil.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build goprobe: %v\n%s", err, out)
	}
	compared := 0
	for _, name := range []string{"clang-O2", "gcc-O3", "go", "rust-O3"} {
		b, _ := BuildNamed(name)
		if _, err := exec.LookPath(b.Tool()); err != nil {
			testutil.Skipf(t, "%s not found", b.Tool())
		}
		for _, seed := range []int64{1, 2, 3, 4, 5, 6} {
			p := Generate(seed)
			dir := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d", name, seed))
			bin, err := b.Make(p, dir)
			if err != nil {
				t.Fatalf("%s seed %d: %v", name, seed, err)
			}
			for _, u := range unreadable(t, goprobe, bin, p, b.Lang) {
				vals, _, ok, err := GDBValues(bin, dir, u.addr, u.fn, u.arg)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					continue // the site did not run, or gdb has no such frame
				}
				for _, v := range vals {
					if v != "" && v != "<optimized out>" {
						t.Errorf("%s seed %d: %s at %#x: goprobe prints ? (%s); gdb prints %s = %s",
							name, seed, u.fn, u.addr, u.why, u.arg, strings.Join(vals, ","))
						break
					}
				}
				compared++
			}
		}
	}
	t.Logf("%d unreadable arguments compared with gdb", compared)
	if compared < 40 {
		t.Errorf("%d unreadable arguments compared with gdb, want at least 40", compared)
	}
}

// unreadableArg is an argument goprobe's spec gives no location for.
type unreadableArg struct {
	fn, arg, why string
	addr         uint64
}

// unreadable lists, for every function of p, the arguments the spec of
// `goprobe gen` says have no location at a site, up to 4 per function.
func unreadable(t *testing.T, goprobe, bin string, p *Program, lang Lang) []unreadableArg {
	var out []unreadableArg
	for _, f := range p.Funcs {
		sym := p.Symbol(lang, f)
		raw, err := exec.Command(goprobe, "gen", "--format=spec", "-x", bin, sym+" $params").Output()
		if err != nil {
			continue // a function the compiler left no code for
		}
		var spec struct {
			Probes []struct {
				Sites []struct {
					Addr uint64
					Args []specArg
				}
			}
		}
		if err := json.Unmarshal(raw, &spec); err != nil {
			t.Fatalf("%s: spec of %s: %v", bin, sym, err)
		}
		n := 0
		for _, pr := range spec.Probes {
			for _, s := range pr.Sites {
				for _, a := range s.Args {
					if a.Unavailable != "" && ReasonClass(a.Unavailable) == ReasonNoLocation && n < 4 {
						out = append(out, unreadableArg{fn: sym, arg: a.Name, why: a.Unavailable, addr: s.Addr})
						n++
					}
				}
			}
		}
	}
	return out
}

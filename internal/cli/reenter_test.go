package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// buildReenter builds probe/testdata/reenter and returns it with the
// source line of each of its functions' declarations.
func buildReenter(t *testing.T) (string, map[string]int) {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "reenter")
	bin := filepath.Join(t.TempDir(), "reenter")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for i, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^func (\w+)\(`).FindStringSubmatch(l); m != nil {
			lines[m[1]] = i + 1
		}
	}
	return bin, lines
}

// said is the program's own count of each function's calls.
func said(t *testing.T, out string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`calls add=(\d+) deep=(\d+) big=(\d+) huge=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the program printed no counts:\n%s", out)
	}
	n := map[string]int{}
	for i, f := range []string{"add", "deep", "big", "huge"} {
		n[f], _ = strconv.Atoi(m[i+1])
	}
	return n
}

// TestStatReentry: a Go function's entry probe sits on its stack check's
// branch, which runs again when the function starts over after morestack
// (a stack growth, a preemption request); every probe counts each call
// once. The program counts its own calls: 200,000 calls of a method in a
// loop (preemption requests), and goroutines recursing deep enough to
// grow their stacks through functions with each shape of the check (a
// small, a large, a huge frame). Entry probes, %return probes, the line of
// a declaration, and the capture a %return probe keeps from the entry all
// agree with the program.
func TestStatReentry(t *testing.T) {
	needBPF(t)
	bin, line := buildReenter(t)
	for _, run := range [][]string{{"loop", "200000"}, {"grow", "8", "2000"}} {
		t.Run(run[0], func(t *testing.T) {
			defs := map[string]string{
				"main.(*acc).add": "add", "main.deep": "deep", "main.big": "big", "main.huge": "huge",
				"main.(*acc).add%return": "add", "main.huge%return": "huge",
				fmt.Sprintf("main.go:%d", line["big"]): "big",
				"main.(*acc).add%return v": "add", // keeps v from the entry
			}
			args := []string{"stat", "--json"}
			for d := range defs {
				args = append(args, d)
			}
			code, out, errs := runGoprobe(append(append(args, "--", bin), run...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			want := said(t, out)
			if want["add"] == 0 || run[0] == "grow" && want["huge"] == 0 {
				t.Fatalf("the program made no calls:\n%s", out)
			}
			var got struct {
				Probes []struct {
					Probe string
					Count int
				}
			}
			js := out[strings.Index(out, `{"probes"`):]
			if err := json.Unmarshal([]byte(js), &got); err != nil {
				t.Fatalf("%v: %s", err, js)
			}
			if len(got.Probes) != len(defs) {
				t.Fatalf("%d probes counted, want %d:\n%s", len(got.Probes), len(defs), out)
			}
			for _, p := range got.Probes {
				if n := want[defs[p.Probe]]; p.Count != n {
					t.Errorf("%s counted %d; the program made %d calls", p.Probe, p.Count, n)
				}
			}
		})
	}
}

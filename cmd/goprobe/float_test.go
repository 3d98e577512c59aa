package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestFloatLater: a float parameter arrives in a vector register, which a
// uprobe cannot read, and the function stores it in its frame on every
// path before using it (C built with -O2, Go). goprobe moves the entry site
// to the first address where the location list puts it in memory, and the
// values it reads there are the ones the program prints, one event per call;
// so is the field the probe reads beside it. Unoptimised C keeps parameters in
// frame slots, filled by the prologue: the entry site is the prologue's end,
// before note is called, and the slots are read through the call frame
// information there.
func TestFloatLater(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "float")
	for _, c := range []struct {
		lang, def, field string
		before           bool // the site comes before note: the count is one less than printed
		build            func(bin string) *exec.Cmd
	}{
		{"c", "add v a->n", "a->n", false, func(bin string) *exec.Cmd {
			cmd := exec.Command("gcc", "-O2", "-g", "-o", bin, "float.c")
			cmd.Dir = dir
			return cmd
		}},
		{"c-O0", "add v a->n", "a->n", true, func(bin string) *exec.Cmd {
			cmd := exec.Command("gcc", "-O0", "-g", "-o", bin, "float.c")
			cmd.Dir = dir
			return cmd
		}},
		{"go", "main.(*hist).Observe v h->count", "h->count", false, func(bin string) *exec.Cmd {
			cmd := exec.Command("go", "build", "-o", bin, ".")
			cmd.Dir = filepath.Join(dir, "go")
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
			return cmd
		}},
	} {
		t.Run(c.lang, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "float")
			if out, err := c.build(bin).CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			const calls = 7
			printed, err := exec.Command(bin, fmt.Sprint(calls)).Output()
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(string(printed)), "\n") {
				var v float64
				var n int
				if _, err := fmt.Sscanf(line, "v=%g n=%d", &v, &n); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if c.before {
					n--
				}
				want = append(want, fmt.Sprintf("%g n=%d", v, n))
			}
			code, out, errs := runGoprobe("trace", "--json", c.def, "--", bin, fmt.Sprint(calls))
			if code != 0 {
				t.Fatalf("goprobe trace: exit %d: %s", code, errs)
			}
			if moved := strings.Contains(errs, "arrives in a vector register; read at "); moved == c.before {
				t.Errorf("a note that the site moved: %v, want %v:\n%s", moved, !c.before, errs)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasPrefix(line, "{") {
					continue // the program's own output
				}
				var ev struct {
					Site string         `json:"site"`
					Args map[string]any `json:"args"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				if ev.Site != "entry" {
					t.Errorf("site %q, want entry", ev.Site)
				}
				got = append(got, fmt.Sprintf("%g n=%v", ev.Args["v"], ev.Args[c.field]))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("goprobe read:\n%s\nthe program printed:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), errs)
			}
		})
	}
}

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

func runGoprobe(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := Goprobe(args, &out, &errb)
	return code, out.String(), errb.String()
}

// buildCount builds a counting fixture of probe/testdata/count.
func buildCount(t *testing.T, lang string) string {
	t.Helper()
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "count")
	bin := filepath.Join(t.TempDir(), "count")
	var cmd *exec.Cmd
	switch lang {
	case "c":
		cmd = exec.Command("gcc", "-O3", "-g", "-o", bin, "part.c")
		cmd.Dir = dir
	case "go":
		cmd = exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join(dir, "go")
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestBpftraceCount: the generated bpftrace script, run as root against a
// fixture, counts exactly the calls the fixture says it made, although
// most of them were inlined (and, in C, partially inlined).
func TestBpftraceCount(t *testing.T) {
	bpftrace, err := exec.LookPath("bpftrace")
	if err != nil {
		testutil.Skipf(t, "bpftrace not installed: %v", err)
	}
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "bpftrace needs root")
	}
	for _, tc := range []struct {
		lang, fn string
		said     *regexp.Regexp
	}{
		{"c", "maybe_alloc", regexp.MustCompile(`maybe_alloc calls: (\d+)`)},
		{"go", "main.twice", regexp.MustCompile(`twice calls: (\d+)`)},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			bin := buildCount(t, tc.lang)
			// bpftrace 0.17 as Debian builds it refuses addresses inside
			// functions of a binary with symbols; on a stripped copy it
			// takes file offsets as they are: that is where it runs.
			stripped := bin + ".stripped"
			if out, err := exec.Command("strip", "-o", stripped, bin).CombinedOutput(); err != nil {
				t.Fatalf("strip: %v %s", err, out)
			}
			code, script, errs := runGoprobe("gen", "--format=bpftrace", "-x", bin, "--target", stripped, tc.fn)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if strings.Count(script, "uprobe:") < 2 {
				t.Fatalf("fewer than two sites:\n%s", script)
			}
			bt := filepath.Join(t.TempDir(), "count.bt")
			if err := os.WriteFile(bt, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bpftrace, "--unsafe", bt, "-c", stripped+" 5").CombinedOutput()
			if err != nil {
				t.Fatalf("bpftrace: %v\n%s", err, out)
			}
			m := tc.said.FindSubmatch(out)
			got := regexp.MustCompile(`@\[` + regexp.QuoteMeta(tc.fn) + `\]: (\d+)`).FindSubmatch(out)
			if m == nil || got == nil {
				t.Fatalf("no count in:\n%s\n%s", out, script)
			}
			want, _ := strconv.Atoi(string(m[1]))
			n, _ := strconv.Atoi(string(got[1]))
			if n != want || want == 0 {
				t.Errorf("bpftrace counted %d calls; the program made %d\n%s", n, want, out)
			}
		})
	}
}

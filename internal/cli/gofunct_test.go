package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

func runGofunct(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Gofunct(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestGofunctErrors: bad input is one line naming the file, exit 1.
func TestGofunctErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(notELF, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testutil.Fixture(t, "c-layouts").Path
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{notELF}, 1, "not an ELF"},
		{[]string{"-f", "no_such_fn", c}, 1, "no function named no_such_fn"},
		{[]string{}, 2, "arg"},
	} {
		code, _, stderr := runGofunct(tc.args...)
		if code != tc.code || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestGofunctJSON: the Go fixture's functions, with Go names and the
// main function at a real address.
func TestGofunctJSON(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	code, stdout, stderr := runGofunct("--json", "-f", "main.main,github.com/prometheus/client_golang/prometheus.(*counter).Add", b.Path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var fns []struct {
		Name  string `json:"name"`
		Lang  string `json:"lang"`
		LowPC uint64 `json:"low_pc"`
		Size  uint64 `json:"size"`
	}
	if err := json.Unmarshal([]byte(stdout), &fns); err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 {
		t.Fatalf("%d functions: %s", len(fns), stdout)
	}
	for _, fn := range fns {
		if fn.Lang != "go" || fn.LowPC == 0 || fn.Size == 0 {
			t.Errorf("%+v", fn)
		}
	}
}

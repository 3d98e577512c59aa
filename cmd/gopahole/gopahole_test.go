package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
)

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = gopahole(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestErrors: every failure is one line on stderr that names the file, exit
// status 1 (2 for usage errors), nothing on stdout, never a panic.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notELF, []byte("not a binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated")
	c := testutil.Fixture(t, "c-layouts")
	whole, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, whole[:len(whole)/3], 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "stripped")
	if err := os.WriteFile(stripped, whole, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("strip", stripped).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{filepath.Join(dir, "missing")}, 1, []string{"missing", "no such file"}},
		{[]string{empty}, 1, []string{empty, "no ELF file"}},
		{[]string{notELF}, 1, []string{notELF, "not an ELF"}},
		{[]string{truncated}, 1, []string{truncated}},
		{[]string{stripped}, 1, []string{stripped, "no debug info", "-g"}},
		{[]string{"-C", "no_such_type", c.Path}, 1, []string{c.Path, "no_such_type", "not found"}},
		{[]string{"-C", "holy", c.Path}, 1, []string{"closest", "holey"}},
		{[]string{"-F", "elf", c.Path}, 2, []string{"format"}},
		{[]string{"-c", "48", c.Path}, 2, []string{"power of two"}},
		{[]string{"--no-such-flag"}, 2, []string{"unknown flag"}},
		{[]string{c.Path, filepath.Join(dir, "missing")}, 1, []string{"missing", "no such file"}},
	}
	for _, tc := range cases {
		code, stdout, stderr := run(tc.args...)
		name := strings.Join(tc.args, " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, tc.code, stderr)
		}
		if stdout != "" && code != 0 && tc.code != 2 {
			t.Errorf("%s: stdout %q on error", name, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "gopahole: ") {
			t.Errorf("%s: stderr %q: want one line starting with gopahole:", name, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q does not say %q", name, stderr, w)
			}
		}
	}
}

// TestKernelDefault: with no file, gopahole reads the running kernel's BTF.
func TestKernelDefault(t *testing.T) {
	if _, err := os.Stat(loader.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	code, stdout, stderr := run("-C", "list_head,task_struct")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"struct list_head {", "struct task_struct {", "/* size: 16, cachelines: 1, members: 2 */"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

// TestJSONTruth checks --json against what the Go fixture reports about
// itself through reflect, for client_golang's counter and friends, asked
// for by their full import paths.
func TestJSONTruth(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	truth := b.Truth(t)
	var names []string
	for _, tt := range truth {
		names = append(names, tt.Name)
	}
	code, stdout, stderr := run("--json", "-C", strings.Join(names, ","), b.Path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		Name, Kind, Lang string
		Size, Align      int64
		Members          []struct {
			Name         string
			Type         string
			Offset, Size int64
		}
		Holes []struct{ Offset, Size int64 }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout)
	}
	if len(got) != len(truth) {
		t.Fatalf("%d objects for %d types", len(got), len(truth))
	}
	for i, tt := range truth {
		g := got[i]
		if g.Name != tt.Name || g.Kind != "struct" || g.Lang != "go" || g.Size != tt.Size || g.Align != tt.Align {
			t.Errorf("%s: got %s %s %s size %d align %d; want size %d align %d", tt.Name, g.Name, g.Kind, g.Lang, g.Size, g.Align, tt.Size, tt.Align)
		}
		offsets := map[string]int64{}
		last := int64(-1)
		for _, m := range g.Members {
			offsets[m.Name] = m.Offset
			if m.Offset < last {
				t.Errorf("%s: members not in memory order at %s", tt.Name, m.Name)
			}
			last = m.Offset
		}
		for _, tm := range tt.Members {
			if off, ok := offsets[tm.Name]; !ok || off != tm.Offset {
				t.Errorf("%s.%s: offset %d (present %v), want %d", tt.Name, tm.Name, off, ok, tm.Offset)
			}
		}
	}
}

// headerFrom matches the binary named in a generated header's comment.
var headerFrom = regexp.MustCompile(`from \S+?(?: \(build-id [0-9a-f]+\))?\.\n`)

// TestGolden keeps gopahole's text, native and JSON output for a few types
// of each language (go test ./cmd/gopahole -update rewrites the files).
func TestGolden(t *testing.T) {
	cases := []struct {
		fixture, file string
		args          []string
	}{
		{"c-layouts", "c.txt", []string{"-C", "holey,bits,aligned_member"}},
		{"c-layouts", "c-reorg.txt", []string{"-R", "-C", "holey"}},
		{"go-prom", "go-prom.txt", []string{"-C", "github.com/prometheus/client_golang/prometheus.counter,prometheus.gauge"}},
		{"go-prom", "go-prom-native.txt", []string{"--syntax=native", "-C", "prometheus.counter"}},
		{"go-layouts", "go.json", []string{"--json", "-C", "main.Pair[int,string]"}},
		{"rust-layouts", "rust-native.txt", []string{"--syntax=native", "-C", "layouts::Holey,Generic<u32>"}},
		{"zig-layouts", "zig-native.txt", []string{"--syntax=native", "-C", "layouts.Gen(u32)"}},
		{"c-layouts", "c.h", []string{"--format=c", "-C", "holey,bits,aligned_member"}},
		{"go-prom", "go-prom.h", []string{"--format=c", "-C", "prometheus.counter,prometheus.gauge,prometheus.Desc"}},
		{"rust-layouts", "rust.h", []string{"--format=c", "-C", "layouts::Holey,layouts::Shape2,&str"}},
		{"zig-layouts", "zig.h", []string{"--format=c", "-C", "layouts.HasPacked,?u32,[]u16"}},
		{"cpp-layouts", "cpp.h", []string{"--format=c", "-C", "ns::Derived"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			b := testutil.Fixture(t, tc.fixture)
			code, stdout, stderr := run(append(tc.args, b.Path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// A header names the binary it came from: where the fixture
			// was built and its build-id differ between machines.
			stdout = headerFrom.ReplaceAllString(stdout, "from "+tc.fixture+".\n")
			testutil.Golden(t, filepath.Join("testdata", "golden", "gopahole", tc.file), []byte(stdout))
		})
	}
}

// TestCompletion: the completion script is generated for every shell.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := run("--completion", sh)
		if code != 0 || !strings.Contains(stdout, "gopahole") {
			t.Errorf("%s: exit %d, %d bytes, %s", sh, code, len(stdout), stderr)
		}
	}
}

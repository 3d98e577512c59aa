package cfi

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// libcPath is the C library the tests read as it is installed.
const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

var fixtures struct {
	sync.Mutex
	built map[string]string // name: path
}

// buildLine is "build NAME: COMMAND" in a comment at the top of a fixture
// source; COMMAND runs in testdata with $OUT naming the binary.
var buildLine = regexp.MustCompile(`^(?://|#)\s*build ([\w.-]+): (.+)$`)

// buildLines reads the build lines of every source in testdata: name to
// command and source file.
func buildLines(t testing.TB) map[string][2]string {
	t.Helper()
	srcs, err := filepath.Glob(filepath.Join("testdata", "frames.*"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no fixture sources in testdata: %v", err)
	}
	lines := map[string][2]string{}
	for _, src := range srcs {
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 0; sc.Scan() && n < 40; n++ {
			if m := buildLine.FindStringSubmatch(sc.Text()); m != nil {
				lines[m[1]] = [2]string{m[2], src}
			}
		}
		f.Close()
	}
	return lines
}

// fixture returns the path of fixture name: a build line's name, or "libc"
// for the installed C library. Builds are kept in the user's cache
// directory, keyed by the command, the source and the compiler's version,
// so test processes (fuzzing workers among them) share them. A missing
// compiler skips the test (fails it in CI).
func fixture(t testing.TB, name string) string {
	t.Helper()
	if name == "libc" {
		if _, err := os.Stat(libcPath); err != nil {
			testutil.Skipf(t, "%v", err)
		}
		return libcPath
	}
	fixtures.Lock()
	defer fixtures.Unlock()
	if p, ok := fixtures.built[name]; ok {
		return p
	}
	line, ok := buildLines(t)[name]
	if !ok {
		t.Fatalf("no build line for fixture %s in testdata", name)
	}
	command, src := line[0], line[1]
	path := os.Getenv("PATH") + ":" + testutil.ToolPath()
	tool := strings.Fields(command)[0]
	bin, err := lookPath(tool, path)
	if err != nil {
		testutil.Skipf(t, "fixture %s: %v", name, err)
	}
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	version, err := exec.Command(bin, "--version").Output()
	if err != nil {
		version, _ = exec.Command(bin, "version").Output()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", command, text, version)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "binscope-cfi-fixtures", fmt.Sprintf("%s-%x", name, h.Sum(nil)[:8]))
	out := filepath.Join(dir, name)
	if _, err := os.Stat(out); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Processes building at once each write their own file; the
		// rename makes one of them the fixture.
		tmp := fmt.Sprintf("%s.%d", out, os.Getpid())
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir = "testdata"
		cmd.Env = append(os.Environ(), "OUT="+tmp, "PATH="+path, "GOWORK=off")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fixture %s: %s: %v\n%s", name, command, err, msg)
		}
		if err := os.Rename(tmp, out); err != nil {
			t.Fatal(err)
		}
	}
	if fixtures.built == nil {
		fixtures.built = map[string]string{}
	}
	fixtures.built[name] = out
	return out
}

func lookPath(tool, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, tool)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", tool)
}

// open opens path as ELF, closed at the test's end.
func open(t testing.TB, path string) *elfx.File {
	t.Helper()
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// table reads path's rows.
func table(t testing.TB, path string) []Row {
	t.Helper()
	rows, err := Table(open(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rawSection returns the (decompressed) contents and address of section
// name of path, or nil.
func rawSection(t testing.TB, path, name string) ([]byte, uint64) {
	t.Helper()
	data, addr, err := sectionData(open(t, path), name)
	if err != nil {
		t.Fatal(err)
	}
	return data, addr
}

// testMachine is the parser's view of f, as Table builds it.
func testMachine(f *elfx.File) *machine {
	return &machine{order: f.ByteOrder, addrSize: int(f.PointerSize()), fp: map[elf.Machine]uint64{elf.EM_X86_64: 6, elf.EM_AARCH64: 29}[f.Machine],
		plt: f.Machine == elf.EM_X86_64}
}

// tool runs a command and returns its standard output; a missing tool
// skips the test (fails it in CI).
func tool(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		testutil.Skipf(t, "%v", err)
	}
	out, err := exec.Command(name, args...).Output()
	// readelf exits 1 over a missing separate debug file after its dump.
	if err != nil && len(out) == 0 {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

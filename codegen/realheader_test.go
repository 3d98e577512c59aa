package codegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// wholeRoots is what gopahole --format=c FILE emits: every named struct,
// union and class, and the typedef that names an anonymous one.
func wholeRoots(spec *types.Spec) []types.Type {
	var roots []types.Type
	for _, t := range spec.Types() {
		switch v := t.(type) {
		case *types.Struct:
			roots = append(roots, v)
		case *types.Typedef:
			if s, ok := types.Resolve(v).(*types.Struct); ok && s.Name == "" {
				roots = append(roots, v)
			}
		}
	}
	return roots
}

// TestHeaderWholeBinary: the header of every type of a real program of
// each language (Rust std and crates, Zig std, cmd/go, C++ over Boost,
// glibc, the debug build of CPython, libstdc++) compiles with clang -target bpf and
// every _Static_assert in it holds.
func TestHeaderWholeBinary(t *testing.T) {
	bins := []struct {
		name string
		path func(t *testing.T) string
	}{
		{"rust-real", func(t *testing.T) string { return testutil.Fixture(t, "rust-real").Path }},
		{"zig-std", func(t *testing.T) string { return testutil.Fixture(t, "zig-std").Path }},
		{"go-cmd", func(t *testing.T) string { return testutil.Fixture(t, "go-cmd").Path }},
		{"cpp-real", func(t *testing.T) string { return testutil.Fixture(t, "cpp-real").Path }},
		{"libc", func(t *testing.T) string { return testutil.RealBinary(t, "libc") }},
		{"python3.11d", func(t *testing.T) string { return testutil.RealBinary(t, "python3.11d") }},
		// iostreams' virtual bases, bool bitfields wider than a bit.
		{"libstdc++", func(t *testing.T) string { return testutil.RealBinary(t, "libstdc++") }},
	}
	for _, b := range bins {
		t.Run(b.name, func(t *testing.T) {
			if testing.Short() && (b.name == "go-cmd" || b.name == "libc") {
				t.Skip("large header; -short")
			}
			path := b.path(t)
			spec, err := dwarf.Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			roots := wholeRoots(spec)
			var h bytes.Buffer
			if _, err := codegen.WriteHeader(&h, roots, &codegen.HeaderOptions{Source: path}); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(h.String(), "_Static_assert("); n < len(roots) {
				t.Errorf("%d asserts for %d types", n, len(roots))
			}
			dir := t.TempDir()
			if os.Getenv("BINSCOPE_KEEP_HEADER") != "" {
				dir = os.Getenv("BINSCOPE_KEEP_HEADER")
			}
			if err := os.WriteFile(filepath.Join(dir, "types.h"), h.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			compileBPF(t, dir, "#include \"types.h\"\n")
		})
	}
}

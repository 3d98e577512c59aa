package dwarf_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ianlancetaylor/demangle"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// inlineReport is one inlining the compiler says it did.
type inlineReport struct {
	callee, file string
	line, col    int
}

// parseReports reads a compiler's inlining report; pattern captures file,
// line, column and callee.
func parseReports(out []byte, pattern string) []inlineReport {
	re := regexp.MustCompile(pattern)
	var reports []inlineReport
	for _, l := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			line, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			reports = append(reports, inlineReport{callee: m[4], file: m[1], line: line, col: col})
		}
	}
	return reports
}

func functions(t *testing.T, bin string) []*types.Func {
	t.Helper()
	return model(t, bin).Funcs()
}

// model is the model of code of bin: the loader's functions joined with
// the symbol tables (clones, entries), as every view reads them.
func model(t *testing.T, bin string) *code.Model {
	t.Helper()
	m, err := code.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// findSite reports whether a function named by match has an inline site
// at file:line (and col, when the producer records columns).
func findSite(fns []*types.Func, r inlineReport, match func(name, callee string) bool, cols bool) bool {
	for _, fn := range fns {
		if !match(fn.Name, r.callee) {
			continue
		}
		for _, s := range fn.Inlined {
			if filepath.Base(s.CallFile) == filepath.Base(r.file) && s.CallLine == r.line && (!cols || s.CallColumn == r.col) {
				return true
			}
		}
	}
	return false
}

// TestInlineTruthC: every inlining gcc -fopt-info-inline-optimized reports
// is an inline site at the reported file:line:column.
func TestInlineTruthC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "inl")
	cmd := exec.Command(gcc, "-O2", "-g", "-fopt-info-inline-optimized", "-o", bin, "inl.c")
	cmd.Dir = filepath.Join("testdata", "inline")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	reports := parseReports(out, `^([^:\s]+):(\d+):(\d+): optimized: +Inlining ([^/\s]+)/\d+ into`)
	if len(reports) < 4 {
		t.Fatalf("gcc reported %d inlinings:\n%s", len(reports), out)
	}
	fns := functions(t, bin)
	for _, r := range reports {
		if !findSite(fns, r, func(name, callee string) bool { return name == callee }, true) {
			t.Errorf("gcc inlined %s at %s:%d:%d; no such inline site", r.callee, r.file, r.line, r.col)
		}
	}
	for _, fn := range fns {
		for _, s := range fn.Inlined {
			if s.Caller == "?" || s.EntryPC == 0 || len(s.Ranges) == 0 {
				t.Errorf("%s inlined at %s:%d: caller %q entry %#x ranges %v", fn.Name, s.CallFile, s.CallLine, s.Caller, s.EntryPC, s.Ranges)
			}
		}
	}
}

// TestInlineTruthGo: every call go build -gcflags=-m says it inlined is an
// inline site at the reported file and line (Go's DWARF has no columns).
func TestInlineTruthGo(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "inl")
	cmd := exec.Command("go", "build", "-gcflags=-m", "-o", bin, ".")
	cmd.Dir = filepath.Join("testdata", "inline", "go")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	reports := parseReports(out, `^\./([^:\s]+):(\d+):(\d+): inlining call to (\S+)`)
	if len(reports) < 3 {
		t.Fatalf("go build -m reported %d inlinings:\n%s", len(reports), out)
	}
	// -m names functions of the package being built without the package.
	match := func(name, callee string) bool { return name == callee || name == "main."+callee }
	fns := functions(t, bin)
	for _, r := range reports {
		if !findSite(fns, r, match, false) {
			t.Errorf("go build inlined %s at %s:%d; no such inline site", r.callee, r.file, r.line)
		}
	}
}

// TestPartialInlining: GCC splits maybe_alloc into an inlined head and the
// out-of-line maybe_alloc.part.0; the clone is tied to maybe_alloc, every
// inlining gcc reports is a site, and the inline chain at each site's
// entry names maybe_alloc.
func TestPartialInlining(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "part")
	cmd := exec.Command(gcc, "-O3", "-g", "-fopt-info-inline-optimized", "-o", bin, "part.c")
	// The fixture the probing tests count calls with.
	cmd.Dir = filepath.Join(testutil.Root(t), "probe", "testdata", "count")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := ef.Symbols()
	ef.Close()
	var parts []elf.Symbol
	outOfLine := false
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "maybe_alloc.part.") {
			parts = append(parts, s)
		}
		outOfLine = outOfLine || s.Name == "maybe_alloc"
	}
	if len(parts) == 0 {
		t.Fatalf("gcc made no maybe_alloc.part clone (symbols: %d)", len(syms))
	}
	m := model(t, bin)
	fns := m.Funcs()
	var fn *types.Func
	for _, f := range fns {
		if f.Name == "maybe_alloc" {
			fn = f
		}
	}
	if fn == nil {
		t.Fatal("no function maybe_alloc")
	}
	for _, p := range parts {
		found := false
		for _, c := range fn.Clones {
			found = found || (c.Symbol == p.Name && c.Address == p.Value && c.Size == p.Size && c.Kind == "part")
		}
		if !found {
			t.Errorf("clone %s at %#x not tied to maybe_alloc: %+v", p.Name, p.Value, fn.Clones)
		}
	}
	if !outOfLine && fn.LowPC != 0 {
		t.Errorf("maybe_alloc has no out-of-line copy, yet LowPC %#x", fn.LowPC)
	}
	reports := parseReports(out, `^([^:\s]+):(\d+):(\d+): optimized: +Inlin(?:ing|ed) (maybe_alloc)[^/\s]*/\d+ into`)
	if len(reports) < 3 {
		t.Fatalf("gcc reported %d inlinings of maybe_alloc:\n%s", len(reports), out)
	}
	for _, r := range reports {
		if !findSite(fns, r, func(name, callee string) bool { return name == callee }, true) {
			t.Errorf("gcc inlined %s at %s:%d:%d; no such inline site", r.callee, r.file, r.line, r.col)
		}
	}
	for _, s := range fn.Inlined {
		chain := m.Expansions(s.EntryPC)
		if len(chain) == 0 || chain[0].Callee != fn {
			t.Errorf("inline chain at %#x: %+v", s.EntryPC, chain)
		}
	}
}

// TestInlineTruthRust: every inlining of the fixture's functions that
// LLVM reports (-C remark=inline) is an inline site at the reported
// file:line:column. The fixture's callees are too large for rustc's MIR
// inliner, which reports nothing, so LLVM does all of its inlining.
func TestInlineTruthRust(t *testing.T) {
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		testutil.Skipf(t, "rustc not installed: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "inl")
	cmd := exec.Command(rustc, "-C", "opt-level=2", "-g", "-C", "remark=inline", "-o", bin, "inl.rs")
	cmd.Dir = filepath.Join("testdata", "inline")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rustc: %v\n%s", err, out)
	}
	reports := parseReports(out, `^note: (\S*inl\.rs):(\d+):(\d+) inline \(success\): '([^']+)' inlined into`)
	if len(reports) < 4 {
		t.Fatalf("rustc reported %d inlinings in inl.rs:\n%s", len(reports), out)
	}
	fns := functions(t, bin)
	match := func(name, callee string) bool {
		d, err := demangle.ToString(callee, demangle.NoParams)
		return err == nil && (name == d || strings.HasPrefix(d, name+"::h"))
	}
	for _, r := range reports {
		if !findSite(fns, r, match, true) {
			t.Errorf("rustc inlined %s at %s:%d:%d; no such inline site", r.callee, r.file, r.line, r.col)
		}
	}
}

// TestInlineTruthZig: Zig inlines every call of an inline fn, by the
// language's rule; each call in the fixture is an inline site at its line
// and at the column of the call's parenthesis, where Zig puts call columns.
func TestInlineTruthZig(t *testing.T) {
	zig, err := exec.LookPath("zig")
	if err != nil {
		testutil.Skipf(t, "zig not installed: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "inl")
	src, err := filepath.Abs(filepath.Join("testdata", "inline", "inl.zig"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zig, "build-exe", "-O", "Debug", "-femit-bin="+bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ZIG_GLOBAL_CACHE_DIR="+filepath.Join(dir, "cache"), "ZIG_LOCAL_CACHE_DIR="+filepath.Join(dir, "cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zig: %v\n%s", err, out)
	}
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	inlineFn := regexp.MustCompile(`(?m)^\s*(?:pub )?inline fn (\w+)\(`)
	var names []string
	for _, m := range inlineFn.FindAllStringSubmatch(string(text), -1) {
		names = append(names, m[1])
	}
	call := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\(`)
	var reports []inlineReport
	for i, l := range strings.Split(string(text), "\n") {
		if strings.Contains(l, "inline fn ") || strings.HasPrefix(strings.TrimSpace(l), "//") {
			continue
		}
		for _, m := range call.FindAllStringSubmatchIndex(l, -1) {
			reports = append(reports, inlineReport{callee: "inl." + l[m[2]:m[3]], file: "inl.zig", line: i + 1, col: m[1]})
		}
	}
	if len(reports) < 3 {
		t.Fatalf("%d calls of inline fns found in the fixture", len(reports))
	}
	fns := functions(t, bin)
	for _, r := range reports {
		if !findSite(fns, r, func(name, callee string) bool { return name == callee }, true) {
			t.Errorf("%s called at %s:%d:%d; no such inline site", r.callee, r.file, r.line, r.col)
		}
	}
}

package code_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"github.com/binscope/binscope/internal/naming"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/testutil"
)

// The oracle tests compare the model of code with tools nobody here wrote,
// on real programs: Debian's glibc, Python and libstdc++ with their debug
// files, and fixtures over Boost and nlohmann-json, real crates, Zig's std
// and the go command.

const (
	// oracleSamples addresses are sampled per binary (fixed seed), and at
	// least oracleMinCompared of them must be compared.
	oracleSamples     = 250
	oracleMinCompared = 200
	oracleSeed        = 1
)

// oracleTarget is one binary the oracle tests read.
type oracleTarget struct {
	name string
	path func(t *testing.T) string
	// llvmFirst makes llvm-symbolizer the oracle instead of addr2line, for
	// the reason given.
	llvmFirst string
	// goLines adds go tool addr2line (.gopclntab) where llvm-symbolizer
	// has no row.
	goLines bool
	// plain, when set, is the binary addr2line reads instead: the same
	// code built without split DWARF (addr2line reads no split DWARF),
	// its .text required identical.
	plain func(t *testing.T) string
}

func realBinary(name string) func(t *testing.T) string {
	return func(t *testing.T) string { return testutil.RealBinary(t, name) }
}

func fixture(name string) func(t *testing.T) string {
	return func(t *testing.T) string { return testutil.Fixture(t, name).Path }
}

var oracleTargets = []oracleTarget{
	{name: "libc", path: realBinary("libc")},
	{name: "python3.11", path: realBinary("python3.11")},
	{name: "libstdc++", path: realBinary("libstdc++")},
	{name: "cpp-real", path: fixture("cpp-real")},
	{name: "rust-real", path: fixture("rust-real")},
	{name: "zig-std", path: fixture("zig-std")},
	{name: "go-cmd", path: fixture("go-cmd"),
		// binutils 2.40's addr2line cannot read the DWARF 5 line tables
		// the Go linker writes (Go 1.25 on): it prints the compile unit's
		// name "go.go" with line 0 and no inline frames for every address,
		// while llvm-symbolizer reads file, line and inline chain.
		llvmFirst: "addr2line cannot read Go's DWARF 5 line tables", goLines: true},
	{name: "c-layouts", path: fixture("c-layouts")},
	{name: "cpp-layouts", path: fixture("cpp-layouts")},
	// Split DWARF, from .dwo files and from a .dwp package: binutils
	// 2.40's addr2line reads no line of it (??:? for every address), so
	// it reads the same code built without -gsplit-dwarf; llvm-symbolizer
	// reads the split DWARF itself (and drops some inline frames there
	// that it reads in the plain build).
	{name: "c-split", path: fixture("c-split"), plain: fixtureSibling("c-split", "c-split-plain")},
	{name: "c-split-dwp", path: fixtureSibling("c-split", "c-split-dwp"), plain: fixtureSibling("c-split", "c-split-plain")},
	// DWARF 4's GNU extension: addr2line reads it, but misses inline
	// frames (atoi in main), and llvm-symbolizer those whose ranges are
	// lists (rotl in checksum, as in the DWARF 5 builds), where the plain
	// build of the same code has them.
	{name: "c-split4", path: fixtureSibling("c-split", "c-split4"), plain: fixtureSibling("c-split", "c-split-plain")},
	{name: "c-split4-dwp", path: fixtureSibling("c-split", "c-split4-dwp"), plain: fixtureSibling("c-split", "c-split-plain")},
}

// sameText fails the test unless a and b have the same .text at the same
// address.
func sameText(t *testing.T, a, b string) {
	t.Helper()
	var texts [2][]byte
	var addrs [2]uint64
	for i, p := range []string{a, b} {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := f.Section(".text")
		if s == nil {
			t.Fatalf("%s: no .text", p)
		}
		if texts[i], err = s.Data(); err != nil {
			t.Fatal(err)
		}
		addrs[i] = s.Addr
	}
	if addrs[0] != addrs[1] || !bytes.Equal(texts[0], texts[1]) {
		t.Fatalf("%s and %s differ in .text (at %#x and %#x): not one code for two builds of DWARF", a, b, addrs[0], addrs[1])
	}
}

// fixtureSibling is another binary the build of fixture name makes beside
// it.
func fixtureSibling(name, sibling string) func(t *testing.T) string {
	return func(t *testing.T) string { return filepath.Join(filepath.Dir(testutil.Fixture(t, name).Path), sibling) }
}

// Reasons for which a difference between the model and addr2line is not a
// disagreement. Each applies only where addr2line and llvm-symbolizer
// disagree with each other in that way, and the model must then agree with
// the oracle that is right (or, for names of one body, with either).
const (
	// addr2line (binutils 2.40) reports the compile unit's primary file
	// for rows of the line table that name another file: out-of-line
	// copies of header functions (std::type_info::name at "layouts.cc:103"
	// instead of "typeinfo:103"), .cold pieces, LTO's "<artificial>".
	// llvm-symbolizer and llvm-dwarfdump --debug-line read the row's file:
	// the model must agree with them.
	reasonFile = "addr2line names the compile unit's file, not the line table row's (llvm-symbolizer is right)"
	// The oracles name one body differently: addr2line names the
	// outermost frame by a symbol at the function's address, an alias
	// such as glibc's __GI_sigemptyset or __fscanf, where the DWARF
	// subprogram and llvm-symbolizer say sigemptyset and fscanf; and code
	// folded into one body by identical code folding carries several
	// names (nlohmann's json_sax_dom_parser and json_sax_dom_callback_parser
	// parse_error, Rust's <i64 as Display>::fmt and <isize as
	// Display>::fmt). Either oracle's name is right.
	reasonName = "the oracles name one body differently (symbol alias or folded code); either name is right"
)

// verdict is the outcome for one address.
type verdict struct {
	agree  bool
	reason string // why a difference from the first oracle is accepted
	diff   string // the difference, when not agreeing
}

// judge compares the model's chain got with the first oracle's want; where
// they differ and the two oracles differ from each other in a way listed
// above, it applies that case's rule.
func judge(got, want, other []testutil.OracleFrame) verdict {
	d := testutil.CompareFrames(got, want)
	if d == "" {
		return verdict{agree: true}
	}
	if other == nil || testutil.CompareFrames(want, other) == "" || len(want) != len(other) || len(got) != len(want) {
		return verdict{diff: d}
	}
	// The oracles have the same number of frames and differ in some
	// fields: find which.
	files, names, lines := false, false, false
	for i := range want {
		w, o := want[i], other[i]
		if testutil.NormFunc(w.Func) != testutil.NormFunc(o.Func) {
			names = true
		}
		if !testutil.SameFile(w.File, o.File) {
			files = true
		}
		if w.Line != o.Line {
			lines = true
		}
	}
	if lines {
		return verdict{diff: d}
	}
	ok := true
	for i := range got {
		g, w, o := got[i], want[i], other[i]
		if testutil.NormFunc(g.Func) != testutil.NormFunc(w.Func) && testutil.NormFunc(g.Func) != testutil.NormFunc(o.Func) {
			ok = false
		}
		// Where the files differ, other (llvm-symbolizer) is right.
		file := w.File
		if files {
			file = o.File
		}
		if (!testutil.SameFile(g.File, file) && (g.Line != 0 || w.Line != 0)) || g.Line != w.Line {
			ok = false
		}
	}
	if !ok {
		return verdict{diff: d}
	}
	var why []string
	if files {
		why = append(why, reasonFile)
	}
	if names {
		why = append(why, reasonName)
	}
	return verdict{agree: true, reason: strings.Join(why, "; ")}
}

// reasonAlias: the model names a function by its DWARF name, the oracle by
// another symbol at the same entry address (glibc's __GI___isinf for
// __isinf, Go's and C's aliases): one function, one address, both names
// the model knows (Func.Aliases, Func.Linkage).
const reasonAlias = "the oracle names the function by another symbol of its entry address (an alias the model lists)"

// aliasTo renames each frame of got whose function the oracle (want, else
// other) names by one of the function's other names: its linkage name or
// a symbol alias of its entry.
func aliasTo(fs []code.Frame, got []testutil.OracleFrame, oracles ...[]testutil.OracleFrame) bool {
	renamed := false
	for i := range got {
		fn := fs[i].Func
		if fn == nil {
			continue
		}
		names := append([]string{fn.Linkage}, fn.Aliases...)
		for _, o := range oracles {
			if i >= len(o) || testutil.NormFunc(o[i].Func) == testutil.NormFunc(got[i].Func) {
				continue
			}
			for _, n := range names {
				if n != "" && testutil.NormFunc(n) == testutil.NormFunc(o[i].Func) {
					got[i].Func, renamed = o[i].Func, true
				}
			}
		}
	}
	return renamed
}

func toOracle(fs []code.Frame) []testutil.OracleFrame {
	out := make([]testutil.OracleFrame, len(fs))
	for i, f := range fs {
		out[i] = testutil.OracleFrame{Func: f.Name, File: f.File, Line: f.Line}
	}
	return out
}

// TestAtOracle: for every target, At's inline chain at each sampled
// instruction equals addr2line's (`addr2line -f -i -C`; llvm-symbolizer's
// for Go): frame count, function names (NormFunc), files (SameFile) and
// lines. Differences are accepted only for the reasons above, each where
// the two oracles disagree with each other in that way.
func TestAtOracle(t *testing.T) {
	for _, tg := range oracleTargets {
		t.Run(tg.name, func(t *testing.T) {
			path := tg.path(t)
			addrs := testutil.SampleAddrs(t, path, oracleSamples, oracleSeed)
			a2lPath := path
			if tg.plain != nil {
				a2lPath = tg.plain(t)
				sameText(t, path, a2lPath)
			}
			a2l := testutil.Addr2Line(t, a2lPath, addrs)
			llvm := testutil.LLVMSymbolizer(t, path, addrs)
			first, second, oracle := a2l, llvm, "addr2line"
			if tg.llvmFirst != "" {
				first, second, oracle = llvm, nil, "llvm-symbolizer ("+tg.llvmFirst+")"
			}
			var goLine []testutil.OracleFrame
			if tg.goLines {
				goLine = goAddr2Line(t, path, addrs)
			}
			m, err := code.Open(path, nil)
			if err != nil {
				t.Fatalf("Open(%s): %v", path, err)
			}
			defer m.Close()
			compared, agreed := 0, 0
			reasons := map[string]int{}
			var bad []string
			for i, a := range addrs {
				if len(first[i]) == 0 {
					continue // the oracle knows nothing here
				}
				compared++
				frames := m.At(a)
				got := toOracle(frames)
				var other []testutil.OracleFrame
				if second != nil {
					other = second[i]
				}
				aliased := aliasTo(frames, got, first[i], other)
				v := judge(got, first[i], other)
				if !v.agree && tg.llvmFirst != "" && goLine != nil {
					v = judgeGo(got, first[i], goLine[i])
				}
				if !v.agree && inheritedCtor(got, first[i]) {
					v = verdict{agree: true, reason: reasonInheritedCtor}
				}
				if v.agree && aliased {
					v.reason = strings.TrimPrefix(v.reason+"; "+reasonAlias, "; ")
				}
				if v.agree {
					agreed++
					if v.reason != "" {
						reasons[v.reason]++
					}
					continue
				}
				bad = append(bad, fmt.Sprintf("0x%x: %s\n\tmodel:           %s\n\taddr2line:       %s\n\tllvm-symbolizer: %s",
					a, v.diff, testutil.FormatFrames(got), testutil.FormatFrames(a2l[i]), testutil.FormatFrames(llvm[i])))
			}
			t.Logf("%s: %d sampled, %d compared with %s, %d agree", tg.name, len(addrs), compared, oracle, agreed)
			for r, n := range reasons {
				t.Logf("  %d accepted: %s", n, r)
			}
			if compared < oracleMinCompared {
				t.Errorf("only %d addresses compared, want at least %d", compared, oracleMinCompared)
			}
			if len(bad) > 0 {
				if len(bad) > 10 {
					bad = append(bad[:10], fmt.Sprintf("... and %d more", len(bad)-10))
				}
				t.Errorf("%d of %d addresses disagree:\n%s", compared-agreed, compared, strings.Join(bad, "\n"))
			}
		})
	}
}

var llvmSuffix = regexp.MustCompile(`\.llvm\.[0-9]+$`)

// TestFuncsLowPCIsSymbol: every function of the model with an out-of-line
// copy and a symbol of its linkage name (C: its name) starts at that
// symbol's address. A name several local symbols carry (static functions of
// one name in several files) must start at one of them.
func TestFuncsLowPCIsSymbol(t *testing.T) {
	for _, tg := range oracleTargets {
		t.Run(tg.name, func(t *testing.T) {
			path := tg.path(t)
			byName := map[string][]uint64{}
			for _, s := range testutil.FuncSymbols(t, path) {
				if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
					continue
				}
				// LLVM renames a local symbol it promotes
				// (name.llvm.9118487553243589435); DWARF keeps the
				// name before.
				name := llvmSuffix.ReplaceAllString(s.Name, "")
				byName[name] = append(byName[name], s.Value)
			}
			m, err := code.Open(path, nil)
			if err != nil {
				t.Fatalf("Open(%s): %v", path, err)
			}
			defer m.Close()
			checked := 0
			var bad []string
			for _, f := range m.Funcs() {
				if f.LowPC == 0 {
					continue // inlined only
				}
				name := f.Linkage
				if name == "" {
					name = f.Name
				}
				addrs, ok := byName[name]
				if !ok {
					continue
				}
				checked++
				found := false
				for _, a := range addrs {
					found = found || a == f.LowPC
				}
				if !found {
					bad = append(bad, fmt.Sprintf("%s: LowPC 0x%x, symbol %s at %x", f.Name, f.LowPC, name, addrs))
				}
			}
			t.Logf("%s: %d functions, %d with a symbol checked", tg.name, len(m.Funcs()), checked)
			if checked == 0 {
				t.Errorf("no function has a symbol of its name")
			}
			if len(bad) > 0 {
				n := len(bad)
				if n > 10 {
					bad = bad[:10]
				}
				t.Errorf("%d functions do not start at their symbol:\n%s", n, strings.Join(bad, "\n"))
			}
		})
	}
}

// reasonGoLine: llvm-symbolizer reads no line table row for some Go
// functions (autogenerated wrappers, methods promoted from embedded types:
// it prints ??:0), where Go's own `go tool addr2line`, which reads the
// runtime's .gopclntab, gives the innermost file and line: the model must
// agree with it there.
const reasonGoLine = "llvm-symbolizer has no row here (??:0); go tool addr2line (.gopclntab) agrees with the model"

// judgeGo accepts a Go chain where the first oracle has no file and line
// and Go's own table agrees with the model's innermost frame.
func judgeGo(got, want []testutil.OracleFrame, goTab testutil.OracleFrame) verdict {
	d := testutil.CompareFrames(got, want)
	if len(want) == 0 || want[0].Line != 0 || len(got) != len(want) || goTab.Line == 0 {
		return verdict{diff: d}
	}
	for i := range got {
		if testutil.NormFunc(got[i].Func) != testutil.NormFunc(want[i].Func) {
			return verdict{diff: d}
		}
	}
	if got[0].Line != goTab.Line || !testutil.SameFile(got[0].File, goTab.File) {
		return verdict{diff: d + fmt.Sprintf("; go tool addr2line: %s:%d", goTab.File, goTab.Line)}
	}
	return verdict{agree: true, reason: reasonGoLine}
}

// goAddr2Line runs `go tool addr2line` (Go's own reader of .gopclntab) on
// addrs: the innermost function, file and line of each.
func goAddr2Line(t *testing.T, path string, addrs []uint64) []testutil.OracleFrame {
	t.Helper()
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command("go", "tool", "addr2line", path)
	cmd.Env = append(os.Environ(), "PATH="+testutil.ToolPath())
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool addr2line: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2*len(addrs) {
		t.Fatalf("go tool addr2line: %d lines for %d addresses", len(lines), len(addrs))
	}
	res := make([]testutil.OracleFrame, len(addrs))
	for i := range addrs {
		fr := testutil.OracleFrame{Func: lines[2*i]}
		loc := lines[2*i+1]
		if k := strings.LastIndexByte(loc, ':'); k > 0 {
			fr.File = loc[:k]
			fr.Line, _ = strconv.Atoi(loc[k+1:])
		}
		res[i] = fr
	}
	return res
}

// reasonInheritedCtor: an inheriting constructor (mangled C2I/CI2) is named
// after the base class by binutils' demangler and after the derived class
// by the design card's demangler (ianlancetaylor/demangle):
// __uniq_ptr_data<...>::__uniq_ptr_impl against
// __uniq_ptr_data<...>::__uniq_ptr_data. One function, two spellings.
const reasonInheritedCtor = "an inheriting constructor, named after the base class by c++filt and after the class by the model's demangler"

// inheritedCtor reports whether got and want differ only in one frame
// whose last name component is the class's own name in got (a
// constructor) and another constructor-like name in want.
func inheritedCtor(got, want []testutil.OracleFrame) bool {
	if len(got) != len(want) {
		return false
	}
	diffs := 0
	for i := range got {
		g, w := testutil.NormFunc(got[i].Func), testutil.NormFunc(want[i].Func)
		if g == w {
			continue
		}
		diffs++
		gi, wi := lastScope(g), lastScope(w)
		if gi < 0 || wi < 0 || g[:gi] != w[:wi] {
			return false
		}
		class := naming.StripTemplates(g[:gi])
		if k := strings.LastIndex(class, "::"); k >= 0 {
			class = class[k+2:]
		}
		if naming.StripTemplates(g[gi+2:]) != class || !strings.HasPrefix(w[wi+2:], "__") {
			return false
		}
		if got[i].Line != want[i].Line {
			return false
		}
	}
	return diffs == 1
}

// lastScope is the index of the last "::" of s outside template arguments
// and parentheses, or -1.
func lastScope(s string) int {
	depth, at := 0, -1
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '<', '(':
			depth++
		case '>', ')':
			depth--
		case ':':
			if depth == 0 && s[i+1] == ':' {
				at = i
				i++
			}
		}
	}
	return at
}

package testutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ianlancetaylor/demangle"
)

// OracleFrame is one frame of an inline chain as an outside tool prints it.
// Unknown parts are empty or 0 ("??" and "?" in addr2line's output).
type OracleFrame struct {
	Func string
	File string
	Line int
}

func (f OracleFrame) String() string {
	fn, file := f.Func, f.File
	if fn == "" {
		fn = "??"
	}
	if file == "" {
		file = "??"
	}
	return fmt.Sprintf("%s %s:%d", fn, file, f.Line)
}

// Addr2Line runs one `addr2line -f -i -C -a -e FILE` process over addrs
// (given on its standard input) and returns, per address, its inline chain
// innermost frame first. FILE is path's debug file (DebugFile), so that a
// stripped library's separate DWARF is read. Skips (fails in CI) when
// addr2line is missing.
func Addr2Line(t testing.TB, path string, addrs []uint64) [][]OracleFrame {
	t.Helper()
	tool, ok := haveTool("addr2line")
	if !ok {
		Skipf(t, "addr2line missing (apt-get install binutils)")
	}
	out := runOracle(t, path, addrs, tool, "-f", "-i", "-C", "-a", "-e")
	res, err := ParseAddr2Line(out, addrs)
	if err != nil {
		t.Fatalf("addr2line on %s: %v", path, err)
	}
	return res
}

// LLVMSymbolizer is Addr2Line's counterpart with
// `llvm-symbolizer --inlining --demangle --output-style=JSON --obj=FILE`:
// the same frames, from LLVM's DWARF reader rather than binutils'. Skips
// (fails in CI) when llvm-symbolizer is missing.
func LLVMSymbolizer(t testing.TB, path string, addrs []uint64) [][]OracleFrame {
	t.Helper()
	tool, ok := haveTool("llvm-symbolizer")
	if !ok {
		Skipf(t, "llvm-symbolizer missing (apt-get install llvm)")
	}
	out := runOracle(t, path, addrs, tool, "--inlining", "--demangle", "--output-style=JSON", "--obj")
	res, err := ParseLLVMSymbolizerJSON(out, addrs)
	if err != nil {
		t.Fatalf("llvm-symbolizer on %s: %v", path, err)
	}
	return res
}

// runOracle runs tool with args, then the debug file of path, with one
// address a line on its standard input.
func runOracle(t testing.TB, path string, addrs []uint64, tool string, args ...string) string {
	t.Helper()
	file := DebugFile(path)
	if file == "" {
		file = path
	}
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "0x%x\n", a)
	}
	cmd := exec.Command(tool, append(args, file)...)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", filepath.Base(tool), file, err, stderr)
	}
	return string(out)
}

var discriminator = regexp.MustCompile(` \(discriminator \d+\)$`)

// ParseAddr2Line splits the output of `addr2line -f -i -a` for addrs (in
// that order) into one inline chain per address, innermost first: after
// each address line come pairs of lines, the function and FILE:LINE (with
// an optional " (discriminator N)", dropped).
func ParseAddr2Line(out string, addrs []uint64) ([][]OracleFrame, error) {
	res := make([][]OracleFrame, len(addrs))
	i := -1
	var pending *string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		if pending == nil && i+1 < len(addrs) && isAddrLine(line, addrs[i+1]) {
			i++
			continue
		}
		if i < 0 {
			return nil, fmt.Errorf("output starts with %q, not the address 0x%x", line, addrs[0])
		}
		if pending == nil {
			fn := line
			pending = &fn
			continue
		}
		fr := OracleFrame{Func: unknown(*pending)}
		fr.File, fr.Line = fileLine(discriminator.ReplaceAllString(line, ""))
		res[i] = append(res[i], fr)
		pending = nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if i != len(addrs)-1 || pending != nil {
		return nil, fmt.Errorf("output covers %d of %d addresses", i+1, len(addrs))
	}
	return res, nil
}

func isAddrLine(line string, a uint64) bool {
	if !strings.HasPrefix(line, "0x") {
		return false
	}
	v, err := strconv.ParseUint(line[2:], 16, 64)
	return err == nil && v == a
}

// fileLine splits "FILE:LINE"; "??" and "?" are unknown.
func fileLine(s string) (string, int) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return unknown(s), 0
	}
	n, _ := strconv.Atoi(s[i+1:])
	return unknown(s[:i]), n
}

func unknown(s string) string {
	if s == "??" || s == "?" {
		return ""
	}
	return s
}

// ParseLLVMSymbolizerJSON decodes llvm-symbolizer's JSON output (one object
// per input line) for addrs, in that order.
func ParseLLVMSymbolizerJSON(out string, addrs []uint64) ([][]OracleFrame, error) {
	type symbol struct {
		FunctionName string
		FileName     string
		Line         int
	}
	type entry struct {
		Address string
		Symbol  []symbol
		Error   *struct{ Message string }
	}
	res := make([][]OracleFrame, len(addrs))
	i := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		if i >= len(addrs) {
			return nil, fmt.Errorf("more results than the %d addresses", len(addrs))
		}
		if v, err := strconv.ParseUint(strings.TrimPrefix(e.Address, "0x"), 16, 64); err != nil || v != addrs[i] {
			return nil, fmt.Errorf("result %d is for %s, not 0x%x", i, e.Address, addrs[i])
		}
		if e.Error != nil {
			return nil, fmt.Errorf("0x%x: %s", addrs[i], e.Error.Message)
		}
		for _, s := range e.Symbol {
			fr := OracleFrame{Func: unknown(s.FunctionName), File: unknown(s.FileName), Line: s.Line}
			res[i] = append(res[i], fr)
		}
		// One empty frame is LLVM's way of saying "nothing here".
		if len(res[i]) == 1 && res[i][0] == (OracleFrame{}) {
			res[i] = nil
		}
		i++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if i != len(addrs) {
		return nil, fmt.Errorf("output covers %d of %d addresses", i, len(addrs))
	}
	return res, nil
}

// CompareFrames compares an inline chain got with an oracle's want, frame
// by frame (innermost first): the count, each function name after
// NormFunc, each file by SameFile (not when both lines are 0: a row with
// line 0 belongs to no source line, and tools name its file differently),
// each line. It returns "" when they agree, else the first difference.
func CompareFrames(got, want []OracleFrame) string {
	if isNothing(got) && isNothing(want) {
		return ""
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d frames, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		switch {
		case NormFunc(g.Func) != NormFunc(w.Func):
			return fmt.Sprintf("frame %d: function %q, want %q", i, NormFunc(g.Func), NormFunc(w.Func))
		case !SameFile(g.File, w.File) && (g.Line != 0 || w.Line != 0):
			return fmt.Sprintf("frame %d: file %q, want %q", i, g.File, w.File)
		case g.Line != w.Line:
			return fmt.Sprintf("frame %d: line %d, want %d", i, g.Line, w.Line)
		}
	}
	return ""
}

// isNothing reports whether a chain says nothing: no frames, or one frame
// with no function, file or line (addr2line's "??\n??:0").
func isNothing(c []OracleFrame) bool {
	return len(c) == 0 || (len(c) == 1 && c[0] == (OracleFrame{}))
}

// FormatFrames prints a chain on one line, innermost first.
func FormatFrames(c []OracleFrame) string {
	if len(c) == 0 {
		return "(none)"
	}
	s := make([]string, len(c))
	for i, f := range c {
		s[i] = f.String()
	}
	return strings.Join(s, " <- ")
}

// SameFile compares two file names: whole paths when both are absolute,
// else base names (DWARF 5 line tables and the tools join directories
// differently, and relative names depend on the build directory).
func SameFile(a, b string) bool {
	if filepath.IsAbs(a) && filepath.IsAbs(b) {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return filepath.Base(a) == filepath.Base(b)
}

var (
	rustHash    = regexp.MustCompile(`::h[0-9a-f]{16}$`)
	abiTag      = regexp.MustCompile(`\[abi:[^\]]*\]`)
	cloneParen  = regexp.MustCompile(` \((\.[A-Za-z_]+(\.[0-9]+)*)+\)$`)
	cloneSuffix = regexp.MustCompile(`(\.(cold|part\.[0-9]+|isra\.[0-9]+|constprop\.[0-9]+|lto_priv\.[0-9]+|llvm\.[0-9]+))+$`)
	gnuLambda   = regexp.MustCompile(`\{lambda\(([^()]*)\)#[0-9]+\}`)
	llvmLambda  = regexp.MustCompile(`'lambda[0-9]*'\(([^()]*)\)`)
	gnuUnnamed  = regexp.MustCompile(`\{unnamed type#[0-9]+\}`)
	llvmUnnamed = regexp.MustCompile(`'unnamed[0-9]*'`)
	symVersion  = regexp.MustCompile(`@@?[A-Za-z0-9_.]+$`)
	rustUnicode = regexp.MustCompile(`\$u([0-9a-f]{2,6})\$`)
	rustEscape  = strings.NewReplacer(
		"$LT$", "<", "$GT$", ">", "$LP$", "(", "$RP$", ")", "$C$", ",",
		"$RF$", "&", "$BP$", "*", "$SP$", "@", "$u20$", " ", "$u27$", "'",
		"$u5b$", "[", "$u5d$", "]", "$u7b$", "{", "$u7d$", "}", "$u3b$", ";",
		"$u7e$", "~", "$u22$", "\"", "$u2b$", "+", "..", "::",
	)
)

// NormFunc brings a function name as addr2line -C, llvm-symbolizer
// --demangle or the model prints it to one spelling, so that they can be
// compared whole. It drops:
//
//   - a compiler clone's suffix, as LLVM's demangler appends it
//     ("f(int) (.isra.0.cold)") or as it stays on an undemangled C name
//     ("property_init.lto_priv.0.cold"): the name is the function's, the
//     piece is told by its address;
//
//   - a Rust legacy symbol's hash ("::h" and 16 hex digits), after undoing
//     the "$LT$"-style escapes an older demangler leaves
//     ("_$LT$T$u20$as$u20$core..fmt..Debug$GT$::fmt" → "<T as core::fmt::Debug>::fmt");
//
//   - a C++ parameter list with its cv- and ref-qualifiers
//     ("ns::f<int>(int) const" → "ns::f<int>"), a template function's
//     return type ("void ns::f<int>" → "ns::f<int>") and ABI tags
//     ("[abi:cxx11]");
//
//   - a symbol version ("@@GLIBCXX_3.4.11"), after which a C++ symbol a
//     demangler left alone is demangled (GNU's spelling);
//
//   - "transaction clone for " (the name is the function's);
//
// and it spells what GNU's and LLVM's demanglers spell differently one way:
// "decltype(nullptr)" as "std::nullptr_t", lambdas as "{lambda(ARGS)}"
// (GNU "{lambda(int)#1}", LLVM "'lambda'(int)"; the ordinal is dropped),
// unnamed types as "{unnamed type}", an empty template argument pack as
// nothing (GNU "f<int, , 0>", LLVM "f<int, 0>"), "operator< <T>" as
// "operator<<T>". Qualified names stay qualified; template arguments stay.
func NormFunc(name string) string {
	s := strings.TrimSpace(name)
	s = cloneParen.ReplaceAllString(s, "")
	s = symVersion.ReplaceAllString(s, "")
	s = cloneSuffix.ReplaceAllString(s, "")
	if strings.HasPrefix(s, "_Z") {
		s = demangle.Filter(s)
		s = cloneParen.ReplaceAllString(s, "")
	}
	s = strings.TrimPrefix(s, "transaction clone for ")
	if strings.Contains(s, "$") {
		// A path segment that starts with an escape gets a "_" first.
		s = strings.ReplaceAll(s, "::_$", "::$")
		if strings.HasPrefix(s, "_$") {
			s = s[1:]
		}
		s = rustEscape.Replace(s)
		s = rustUnicode.ReplaceAllStringFunc(s, func(m string) string {
			r, err := strconv.ParseUint(m[2:len(m)-1], 16, 32)
			if err != nil {
				return m
			}
			return string(rune(r))
		})
	}
	s = rustHash.ReplaceAllString(s, "")
	s = abiTag.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "decltype(nullptr)", "std::nullptr_t")
	s = gnuLambda.ReplaceAllString(s, "{lambda($1)}")
	s = llvmLambda.ReplaceAllString(s, "{lambda($1)}")
	s = gnuUnnamed.ReplaceAllString(s, "{unnamed type}")
	s = llvmUnnamed.ReplaceAllString(s, "{unnamed type}")
	for strings.Contains(s, ", ,") {
		s = strings.ReplaceAll(s, ", ,", ",")
	}
	s = strings.ReplaceAll(s, "operator< <", "operator<<")
	s = stripParams(s)
	s = stripReturnType(s)
	return s
}

// stripParams drops a trailing parameter list and the qualifiers after it.
func stripParams(s string) string {
	for {
		t := strings.TrimSpace(s)
		for _, q := range []string{" const", " volatile", " &&", " &", "&&", "&"} {
			t = strings.TrimSuffix(t, q)
		}
		if t == s {
			break
		}
		s = t
	}
	if !strings.HasSuffix(s, ")") || strings.HasSuffix(s, "operator()") {
		return s
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')', '>', ']', '}':
			depth++
		case '(', '<', '[', '{':
			depth--
			if depth == 0 && s[i] == '(' {
				if i == 0 {
					return s // "(anonymous namespace)" alone, not a list
				}
				return strings.TrimSpace(s[:i])
			}
		}
	}
	return s
}

// stripReturnType drops what precedes the name at the outermost level: the
// return type a demangler prints for a template function. Everything from
// an "operator" at the outermost level on is the name ("operator new",
// "operator unsigned long", "std::operator< <char>").
func stripReturnType(s string) string {
	depth := 0
	cut := -1
	for i := 0; i < len(s); i++ {
		if depth == 0 && strings.HasPrefix(s[i:], "operator") && (i == 0 || s[i-1] == ':' || s[i-1] == ' ') {
			break
		}
		switch s[i] {
		case '(', '<', '[', '{':
			depth++
		case ')', '>', ']', '}':
			depth--
		case ' ':
			if depth == 0 {
				cut = i
			}
		}
	}
	return s[cut+1:]
}

// InstructionStarts are the addresses where objdump's disassembly of
// path's executable sections starts an instruction it can decode (bytes
// it shows as "(bad)" are left out): another decoder's reading of where
// instructions start. The test skips (fails in CI) without objdump.
func InstructionStarts(t testing.TB, path string) map[uint64]bool {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", path).Output()
	if err != nil {
		Skipf(t, "objdump -d %s: %v", path, err)
	}
	starts := map[uint64]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+([0-9a-f]+):\t(.*)$`).FindAllStringSubmatch(string(out), -1) {
		if strings.Contains(m[2], "(bad)") {
			continue
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		starts[a] = true
	}
	return starts
}

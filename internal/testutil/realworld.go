package testutil

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/elfx"
)

// realBinaries are the system programs with debug info the tests read, each
// with the Debian package that provides its DWARF.
var realBinaries = map[string]struct {
	path string // a glob: the first match is taken
	pkg  string
}{
	// glibc, -O2 with .cold pieces, aliases, IFUNCs; DWARF in a file found
	// by build-id.
	"libc": {"/lib/x86_64-linux-gnu/libc.so.6", "libc6-dbg"},
	// The -O2 interpreter (DWARF by build-id) and the -O0 debug build with
	// its DWARF inside.
	"python3.11":  {"/usr/bin/python3.11", "python3.11-dbg"},
	"python3.11d": {"/usr/bin/python3.11d", "python3.11-dbg"},
	// libstdc++'s debug build: a complete library (code, .symtab and DWARF)
	// that -dbg installs beside the stripped one.
	"libstdc++": {"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.[0-9]*[0-9]", "libstdc++6-12-dbg"},
}

// RealBinary returns the path of a system binary with debug info by name:
// "libc", "python3.11", "python3.11d" or "libstdc++". The path is the file a
// user would name (the loaded library or program); its DWARF may live in a
// separate file, see DebugFile. The test skips (fails in CI) when the
// binary or its debug info is missing, naming the package to install.
func RealBinary(t testing.TB, name string) string {
	t.Helper()
	rb, ok := realBinaries[name]
	if !ok {
		t.Fatalf("RealBinary: unknown binary %q", name)
	}
	matches, _ := filepath.Glob(rb.path)
	if len(matches) == 0 {
		Skipf(t, "%s: %s missing (apt-get install %s, or scripts/install-deps.sh)", name, rb.path, rb.pkg)
	}
	sort.Strings(matches)
	path := matches[len(matches)-1]
	if DebugFile(path) == "" {
		Skipf(t, "%s: no debug info for %s (apt-get install %s, or scripts/install-deps.sh)", name, path, rb.pkg)
	}
	return path
}

// DebugFile returns the file holding path's DWARF as the tools find it
// (elfx): path itself when it has DWARF, else its separate debug file (by
// build-id under /usr/lib/debug/.build-id, or by .gnu_debuglink), and ""
// when there is none.
func DebugFile(path string) string {
	f, err := elfx.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if f.HasDWARF() {
		return path
	}
	df, _ := f.FindDebugFile()
	if df == nil {
		return ""
	}
	defer df.Close()
	return df.Path
}

// FuncSymbols returns the STT_FUNC symbols of path with a nonzero size and
// a section: those of its .symtab, else of its debug file's .symtab (a
// stripped library keeps only .dynsym), else of its .dynsym. Versions are
// not part of the names.
func FuncSymbols(t testing.TB, path string) []elf.Symbol {
	t.Helper()
	var syms []elf.Symbol
	for _, p := range []string{path, DebugFile(path)} {
		if p == "" {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			t.Fatalf("FuncSymbols: %v", err)
		}
		syms, _ = f.Symbols()
		f.Close()
		if len(syms) > 0 {
			break
		}
	}
	if len(syms) == 0 {
		f, err := elf.Open(path)
		if err != nil {
			t.Fatalf("FuncSymbols: %v", err)
		}
		syms, _ = f.DynamicSymbols()
		f.Close()
	}
	var out []elf.Symbol
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE {
			out = append(out, s)
		}
	}
	return out
}

// SampleAddrs returns n distinct instruction-start addresses of path,
// sorted, chosen at random with the given seed (the same seed gives the
// same addresses): it picks a function symbol (STT_FUNC with a size, one
// per address, none in .plt sections, and, when the file has DWARF, only
// one inside a compile unit's ranges), decodes the function's x86-64
// instructions from its first byte, and picks one of them. Choosing the
// function first spreads the samples over many functions. Fewer than n come
// back only when the file has fewer instructions.
func SampleAddrs(t testing.TB, path string, n int, seed int64) []uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("SampleAddrs: %v", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		t.Fatalf("SampleAddrs: %s: machine %v, only x86-64 is decoded", path, f.Machine)
	}
	covered := cuRanges(DebugFile(path))
	seen := map[uint64]bool{}
	var funcs []elf.Symbol
	for _, s := range FuncSymbols(t, path) {
		if seen[s.Value] || strings.HasSuffix(s.Name, "@plt") {
			continue
		}
		sec := sectionAt(f, s.Value)
		if sec == nil || sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR == 0 || strings.HasPrefix(sec.Name, ".plt") {
			continue
		}
		if covered != nil && !covered.has(s.Value) {
			continue
		}
		seen[s.Value] = true
		funcs = append(funcs, s)
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].Value < funcs[j].Value })
	if len(funcs) == 0 {
		t.Fatalf("SampleAddrs: %s has no function symbols to sample", path)
	}
	rng := rand.New(rand.NewSource(seed))
	insns := map[int][]uint64{}
	picked := map[uint64]bool{}
	var out []uint64
	for tries := 0; len(out) < n && tries < 50*n; tries++ {
		i := rng.Intn(len(funcs))
		starts, ok := insns[i]
		if !ok {
			starts = InsnStarts(f, funcs[i].Value, funcs[i].Size)
			insns[i] = starts
		}
		if len(starts) == 0 {
			continue
		}
		a := starts[rng.Intn(len(starts))]
		if !picked[a] {
			picked[a] = true
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// InsnStarts decodes the x86-64 instructions in [addr, addr+size) of f and
// returns their addresses. Decoding stops at the first byte sequence it
// cannot decode.
func InsnStarts(f *elf.File, addr, size uint64) []uint64 {
	sec := sectionAt(f, addr)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil
	}
	end := addr + size
	if end > sec.Addr+sec.Size {
		end = sec.Addr + sec.Size
	}
	code := make([]byte, end-addr)
	if _, err := sec.ReadAt(code, int64(addr-sec.Addr)); err != nil {
		return nil
	}
	var out []uint64
	for off := 0; off < len(code); {
		in, err := x86asm.Decode(code[off:], 64)
		if err != nil || in.Len == 0 {
			// ENDBR64 and ENDBR32, which older decoders do not know.
			if bytes.HasPrefix(code[off:], []byte{0xf3, 0x0f, 0x1e}) && len(code[off:]) >= 4 && code[off+3]&0xfe == 0xfa {
				out = append(out, addr+uint64(off))
				off += 4
				continue
			}
			break
		}
		out = append(out, addr+uint64(off))
		off += in.Len
	}
	return out
}

func sectionAt(f *elf.File, addr uint64) *elf.Section {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && addr >= s.Addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// spans is a sorted list of address ranges [lo, hi).
type spans [][2]uint64

func (s spans) has(a uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i][1] > a })
	return i < len(s) && s[i][0] <= a
}

// cuRanges returns the ranges of the compile units of the DWARF in path,
// sorted, or nil when path is "" or has no DWARF.
func cuRanges(path string) spans {
	if path == "" {
		return nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	var out spans
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if rs, err := d.Ranges(e); err == nil {
				for _, rg := range rs {
					if rg[1] > rg[0] {
						out = append(out, rg)
					}
				}
			}
		}
		r.SkipChildren()
	}
	if len(out) == 0 {
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	// Merge overlaps, so that the ends are sorted too.
	merged := out[:1]
	for _, rg := range out[1:] {
		last := &merged[len(merged)-1]
		if rg[0] <= last[1] {
			if rg[1] > last[1] {
				last[1] = rg[1]
			}
			continue
		}
		merged = append(merged, rg)
	}
	return merged
}

// haveTool reports whether the named program is on ToolPath.
func haveTool(name string) (string, bool) {
	for _, dir := range filepath.SplitList(ToolPath()) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

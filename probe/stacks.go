package probe

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/funcs"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/types"
)

// Mapping is one executable file mapping of a process, from
// /proc/PID/maps: the file's bytes from Offset on at [Start, End).
type Mapping struct {
	Start, End, Offset uint64
	Path               string
	Bias               uint64 // address in the process minus address in the file
}

// ProcMappings reads the executable file mappings of process pid, with
// their load bias; files that are not ELF (or are gone) are left out.
func ProcMappings(pid int) ([]Mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 55d4c4a00000-55d4c4a9c000 r-xp 00001000 fd:01 1234 /usr/bin/app
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || !strings.Contains(fs[1], "x") || !strings.HasPrefix(fs[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(fs[0], "-")
		m := Mapping{Path: strings.Join(fs[5:], " ")}
		m.Start, _ = strconv.ParseUint(lo, 16, 64)
		m.End, _ = strconv.ParseUint(hi, 16, 64)
		m.Offset, _ = strconv.ParseUint(fs[2], 16, 64)
		ef, err := elfx.Open(m.Path)
		if err != nil {
			continue
		}
		va, err := ef.VirtualAddress(m.Offset)
		ef.Close()
		if err != nil {
			continue
		}
		m.Bias = m.Start - va
		out = append(out, m)
	}
	return out, sc.Err()
}

// Tables holds the unwind rows of the files a session's processes map,
// each file's once, in the layout of the "unwind_rows" array.
type Tables struct {
	Rows  []UnwindRow
	files map[string][2]uint32 // path: first row, end row
	a     *arch.Arch
	// Failed lists the files whose CFI could not be read (they unwind by
	// frame pointer), with why.
	Failed map[string]string
}

// NewTables starts tables with the frame-pointer row at index 0, which
// addresses outside every module use.
func NewTables(a *arch.Arch) *Tables {
	return &Tables{Rows: []UnwindRow{fpRow}, files: map[string][2]uint32{}, a: a, Failed: map[string]string{}}
}

// Add compiles path's CFI, once, and returns its rows' range.
func (t *Tables) Add(path string) (lo, hi uint32) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if r, ok := t.files[path]; ok {
		return r[0], r[1]
	}
	rows, err := fileRows(path, t.a)
	if err != nil {
		t.Failed[path] = err.Error()
		t.files[path] = [2]uint32{0, 0}
		return 0, 0
	}
	lo = uint32(len(t.Rows))
	t.Rows = append(t.Rows, rows...)
	hi = uint32(len(t.Rows))
	t.files[path] = [2]uint32{lo, hi}
	return lo, hi
}

func fileRows(path string, a *arch.Arch) ([]UnwindRow, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	rows, err := cfi.Table(ef)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no .eh_frame or .debug_frame", path)
	}
	return UnwindRows(rows, a), nil
}

// ProcValue is a process's "unwind_procs" value for its mappings: the
// first MaxModules files with tables.
func (t *Tables) ProcValue(ms []Mapping) []byte {
	b := make([]byte, ProcValueSize)
	n := 0
	for _, m := range ms {
		if n == MaxModules {
			break
		}
		lo, hi := t.Add(m.Path)
		if hi == lo {
			continue
		}
		o := n * moduleSize
		binary.LittleEndian.PutUint64(b[o:], m.Start)
		binary.LittleEndian.PutUint64(b[o+8:], m.End)
		binary.LittleEndian.PutUint64(b[o+16:], m.Bias)
		binary.LittleEndian.PutUint64(b[o+24:], uint64(lo)|uint64(hi)<<32)
		n++
	}
	return b
}

// Symbolizer names the addresses of stacks: functions with their inline
// expansions from DWARF, else from .gopclntab or the symbol table
// (demangled), else module+offset; kernel addresses from /proc/kallsyms.
type Symbolizer struct {
	files  map[string]*fileSyms
	kernel []ksym
}

// NewSymbolizer returns an empty symbolizer; files are read on first use.
func NewSymbolizer() *Symbolizer { return &Symbolizer{files: map[string]*fileSyms{}} }

type fileSyms struct {
	ranges []fnRange
	inl    map[string][]inlineAt // by caller
}

type fnRange struct {
	lo, hi uint64
	fn     *types.Func
}

type inlineAt struct {
	callee *types.Func
	site   types.InlineSite
}

func (s *Symbolizer) file(path string) *fileSyms {
	if fs, ok := s.files[path]; ok {
		return fs
	}
	fs := &fileSyms{inl: map[string][]inlineAt{}}
	s.files[path] = fs
	var fns []*types.Func
	if df, err := dwarf.Open(path, nil); err == nil {
		fns, _ = df.Functions(nil)
		df.Close()
	}
	// Code without DWARF (crt1.o's _start, assembly, a library without its
	// debug file): .gopclntab, else the symbol table, demangled.
	covered := make(map[uint64]bool, len(fns))
	for _, fn := range fns {
		for _, r := range fn.Ranges {
			covered[r[0]] = true
		}
	}
	if ef, err := elfx.Open(path); err == nil {
		var more []*types.Func
		if len(fns) == 0 && pcln.Has(ef) {
			more, _ = pcln.Functions(ef)
		}
		if len(more) == 0 {
			for _, fn := range symbolFuncs(ef) {
				if covered[fn.LowPC] {
					continue
				}
				if d, err := demangle.ToString(fn.Name, demangle.NoParams, demangle.NoTemplateParams); err == nil {
					fn.Name = d
				}
				more = append(more, fn)
			}
		}
		fns = append(fns, more...)
		ef.Close()
	}
	for _, fn := range fns {
		for _, r := range fn.Ranges {
			fs.ranges = append(fs.ranges, fnRange{r[0], r[1], fn})
		}
		for _, in := range fn.Inlined {
			fs.inl[in.Caller] = append(fs.inl[in.Caller], inlineAt{fn, in})
		}
	}
	sort.SliceStable(fs.ranges, func(i, j int) bool { return fs.ranges[i].lo < fs.ranges[j].lo })
	// Aliases (malloc, __libc_malloc): the name with the fewest leading
	// underscores, then the shortest.
	kept := fs.ranges[:0]
	for _, r := range fs.ranges {
		if n := len(kept); n > 0 && kept[n-1].lo == r.lo && kept[n-1].hi == r.hi {
			if plainer(r.fn.Name, kept[n-1].fn.Name) {
				kept[n-1] = r
			}
			continue
		}
		kept = append(kept, r)
	}
	fs.ranges = kept
	return fs
}

// plainer reports whether a is the name to show rather than b.
func plainer(a, b string) bool {
	ua, ub := len(a)-len(strings.TrimLeft(a, "_")), len(b)-len(strings.TrimLeft(b, "_"))
	if ua != ub {
		return ua < ub
	}
	return len(a) < len(b)
}

// User names the address addr of a process with mappings ms, outermost
// frame first: the function, then the inline expansions holding addr.
// A return address (not the innermost frame) is looked up one byte back,
// inside its call.
func (s *Symbolizer) User(ms []Mapping, addr uint64, ret bool) []flame.Frame {
	look := addr
	if ret {
		look--
	}
	for _, m := range ms {
		if look < m.Start || look >= m.End {
			continue
		}
		mod := filepath.Base(m.Path)
		va := look - m.Bias
		fs := s.file(m.Path)
		i := sort.Search(len(fs.ranges), func(i int) bool { return fs.ranges[i].lo > va }) - 1
		if i < 0 || va >= fs.ranges[i].hi {
			return []flame.Frame{{Name: fmt.Sprintf("%s+%#x", mod, va), Module: mod}}
		}
		fn := fs.ranges[i].fn
		out := []flame.Frame{{Name: fn.Name, Module: mod, Lang: fn.Lang}}
		var chain []inlineAt
		for _, in := range fs.inl[fn.Name] {
			for _, r := range in.site.Ranges {
				if va >= r[0] && va < r[1] {
					chain = append(chain, in)
					break
				}
			}
		}
		// An expansion nested in another covers fewer bytes.
		sort.SliceStable(chain, func(i, j int) bool { return funcs.Span(chain[i].site.Ranges) > funcs.Span(chain[j].site.Ranges) })
		for _, in := range chain {
			out = append(out, flame.Frame{Name: in.callee.Name, Module: mod, Lang: in.callee.Lang, Inlined: true})
		}
		return out
	}
	return []flame.Frame{{Name: fmt.Sprintf("%#x", addr), Module: "?"}}
}

type ksym struct {
	addr uint64
	name string
}

// Kernel names a kernel address from /proc/kallsyms.
func (s *Symbolizer) Kernel(addr uint64) flame.Frame {
	if s.kernel == nil {
		s.kernel = readKallsyms()
	}
	i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
	if i < 0 {
		return flame.Frame{Name: fmt.Sprintf("%#x", addr), Module: "[kernel]", Kernel: true}
	}
	return flame.Frame{Name: s.kernel[i].name, Module: "[kernel]", Kernel: true}
}

func readKallsyms() []ksym {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return []ksym{}
	}
	defer f.Close()
	out := []ksym{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || (fs[1] != "t" && fs[1] != "T") {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil || a == 0 {
			continue
		}
		out = append(out, ksym{a, fs[2]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// StackKeySize is the size of a counted stack's key:
//
//	u32 process, s32 aux (a profile's kernel stack id, a probe's index), u64 ips[StackDepth]
const StackKeySize = 8 + 8*StackDepth

// StackKey is a counted stack.
type StackKey struct {
	Pid uint32
	// Aux is the kernel stack's id in a profile (negative: none), the
	// probe's index in a probe session.
	Aux int32
	IPs []uint64 // innermost first, without the trailing zeros
}

// DecodeStackKey reads a key of the "stacks" map.
func DecodeStackKey(b []byte) (StackKey, error) {
	if len(b) != StackKeySize {
		return StackKey{}, errors.New("stack key of the wrong size")
	}
	k := StackKey{Pid: binary.LittleEndian.Uint32(b), Aux: int32(binary.LittleEndian.Uint32(b[4:]))}
	k.IPs = decodeIPs(b[8:])
	return k, nil
}

// decodeIPs reads StackDepth addresses up to the first zero.
func decodeIPs(b []byte) []uint64 {
	var ips []uint64
	for i := 0; i < StackDepth && 8*i+8 <= len(b); i++ {
		ip := binary.LittleEndian.Uint64(b[8*i:])
		if ip == 0 {
			break
		}
		ips = append(ips, ip)
	}
	return ips
}

// libDirs are where the dynamic loader looks for libraries by default.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// LoadedFiles lists the files a process running path will map before its
// first instruction, in the order the dynamic loader searches them for a
// symbol: path, the libraries it needs breadth first (found as the loader
// would by default: RUNPATH, then the standard directories), and its
// interpreter last. A profile sizes its tables with them before the
// command starts.
func LoadedFiles(path string) []string {
	seen := map[string]bool{path: true}
	queue := []string{path}
	var out []string
	interp := ""
	for len(queue) > 0 && len(out) < 256 {
		p := queue[0]
		queue = queue[1:]
		ef, err := elfx.Open(p)
		if err != nil {
			continue
		}
		out = append(out, p)
		var dirs []string
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			rp, _ := ef.DynString(tag)
			for _, r := range rp {
				for _, d := range strings.Split(r, ":") {
					dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(p)))
				}
			}
		}
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_INTERP && interp == "" && prog.Filesz < 4096 {
				b := make([]byte, prog.Filesz)
				if _, err := prog.ReadAt(b, 0); err == nil {
					interp = strings.TrimRight(string(b), "\x00")
				}
			}
		}
		libs, _ := ef.ImportedLibraries()
		ef.Close()
		for _, lib := range libs {
			for _, d := range append(dirs, libDirs...) {
				c := filepath.Join(d, lib)
				if _, err := os.Stat(c); err == nil {
					if !seen[c] {
						seen[c] = true
						queue = append(queue, c)
					}
					break
				}
			}
		}
	}
	if interp == "" {
		return out
	}
	// The loader, unless a library needs it by name (the C library does).
	real, _ := filepath.EvalSymlinks(interp)
	for _, p := range out {
		if r, _ := filepath.EvalSymlinks(p); r == real {
			return out
		}
	}
	return append(out, interp)
}

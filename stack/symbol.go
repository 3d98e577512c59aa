package stack

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/funcs"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/types"
)

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
	// One open: the DWARF's file carries the symbols too.
	var fns []*types.Func
	var ef *elfx.File
	if df, err := dwarf.Open(path, nil); err == nil {
		defer df.Close()
		fns, _ = df.Functions(nil)
		ef = df.ELF
	} else if ef, err = elfx.Open(path); err == nil {
		defer ef.Close()
	}
	if ef == nil {
		return fs
	}
	// Code without DWARF (crt1.o's _start, assembly, a library without its
	// debug file): .gopclntab, else the symbol table, demangled.
	covered := make(map[uint64]bool, len(fns))
	for _, fn := range fns {
		for _, r := range fn.Ranges {
			covered[r[0]] = true
		}
	}
	var more []*types.Func
	if len(fns) == 0 && pcln.Has(ef) {
		more, _ = pcln.Functions(ef)
	}
	if len(more) == 0 {
		for _, fn := range dwarf.SymbolFuncs(ef) {
			if !covered[fn.LowPC] {
				fn.Name = dwarf.Demangle(fn.Name)
				more = append(more, fn)
			}
		}
	}
	fns = append(fns, more...)
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

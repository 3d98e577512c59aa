package stack

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/types"
)

// Symbolizer names the addresses of stacks through the model of code of
// each file: functions with their inline expansions from DWARF, else from
// .gopclntab or the symbol table (demangled), else module+offset; kernel
// addresses from /proc/kallsyms.
type Symbolizer struct {
	files  map[string]*code.Model
	kernel []ksym
}

// NewSymbolizer returns an empty symbolizer; files are read on first use.
func NewSymbolizer() *Symbolizer { return &Symbolizer{files: map[string]*code.Model{}} }

// file is the model of path's code, read once; nil when it cannot be read.
// The model keeps what naming needs in memory, so the file is closed.
func (s *Symbolizer) file(path string) *code.Model {
	if m, ok := s.files[path]; ok {
		return m
	}
	m, err := code.Open(path, &code.Options{Traceback: true})
	if err != nil {
		m = nil
	} else {
		m.Close()
	}
	s.files[path] = m
	return m
}

// displayName is the name a frame shows: among a C function's aliases
// (malloc, __libc_malloc) the plainest.
func displayName(fn *types.Func) string {
	name := fn.Name
	if fn.Lang == types.LangC || fn.Lang == types.LangUnknown {
		for _, a := range fn.Aliases {
			if naming.Plainer(a, name) {
				name = a
			}
		}
	}
	return name
}

// User names the address addr of a process with mappings ms, outermost
// frame first: the function, then the inline expansions holding addr.
// A return address (not the innermost frame) is looked up one byte back,
// inside its call.
func (s *Symbolizer) User(ms []Mapping, addr uint64, ret bool) []Frame {
	frames, _ := s.user(ms, addr, ret, "")
	return frames
}

// UserStack names a user stack of a process with mappings ms, ips
// innermost first, outermost frame first, each address as User names
// it; the frames of Go wrappers the runtime leaves out of its own
// tracebacks are left out (code.Model.Traceback).
func (s *Symbolizer) UserStack(ms []Mapping, ips []uint64) []Frame {
	per := make([][]Frame, len(ips))
	callee := ""
	for i, ip := range ips {
		per[i], callee = s.user(ms, ip, i > 0, callee)
	}
	var out []Frame
	for i := len(per) - 1; i >= 0; i-- {
		out = append(out, per[i]...)
	}
	return out
}

// user is User of an address whose inner frame on the stack is in callee
// (see code.Model.Traceback); it also returns the name of the function
// holding the address ("" when none does).
func (s *Symbolizer) user(ms []Mapping, addr uint64, ret bool, callee string) ([]Frame, string) {
	look := addr
	if ret {
		look--
	}
	for _, mp := range ms {
		if look < mp.Start || look >= mp.End {
			continue
		}
		mod := filepath.Base(mp.Path)
		va := look - mp.Bias
		m := s.file(mp.Readable())
		// The offset of the address itself (a return address, not the
		// byte looked up), as the mapping places the file.
		at := Frame{Module: mod, Addr: addr, Offset: addr - mp.Start + mp.Offset}
		var fn *types.Func
		if m != nil {
			fn = m.Func(va)
			if m.ELF != nil {
				at.BuildID = m.ELF.BuildID
			}
		}
		if fn == nil {
			at.Name = fmt.Sprintf("%s+%#x", mod, va)
			return []Frame{at}, ""
		}
		// The model's chain at va, innermost first: the function, then
		// the expansions, each with its source position.
		chain := m.Traceback(va, callee)
		out := make([]Frame, 0, len(chain))
		for i := len(chain) - 1; i >= 0; i-- {
			c, f := chain[i], at
			f.Name, f.Lang, f.File, f.Line = c.Name, fn.Lang, c.File, c.Line
			if c.Func != nil {
				f.Lang = c.Func.Lang
			}
			if !c.Inline {
				f.Name = displayName(fn)
			}
			f.Inlined = len(out) > 0 // the first at the address holds it
			out = append(out, f)
		}
		return out, fn.Name
	}
	return []Frame{{Name: fmt.Sprintf("%#x", addr), Module: "?", Addr: addr}}, ""
}

type ksym struct {
	addr uint64
	name string
}

// Kernel names a kernel address from /proc/kallsyms.
func (s *Symbolizer) Kernel(addr uint64) Frame {
	if s.kernel == nil {
		s.kernel = readKallsyms()
	}
	i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
	if i < 0 {
		return Frame{Name: fmt.Sprintf("%#x", addr), Module: "[kernel]", Kernel: true}
	}
	return Frame{Name: s.kernel[i].name, Module: "[kernel]", Kernel: true}
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

package stack

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"

	"github.com/binscope/binscope/internal/elfx"
)

// Line is one function at a location: the function and the source line
// it is at there.
type Line struct {
	Func, File string
	Line       int
}

// Location is a stack address placed in its file and named: what a
// profile format that keeps addresses (pprof's) needs.
type Location struct {
	// Addr is the address looked up: a return address minus one, inside
	// its call.
	Addr uint64
	// Map is the mapping holding Addr; nil when none does.
	Map *Mapping
	// BuildID is Map's file's GNU build-id ("" when it has none).
	BuildID string
	// Lines are the function at Addr and the inline expansions holding
	// it, innermost first (pprof's order); the innermost's line is the
	// line table's at Addr, each outer one's the call site of the
	// expansion it holds. Empty when nothing names Addr.
	Lines []Line
}

// Locate places address addr of a process with mappings ms; a return
// address (not the innermost frame) is looked up one byte back, as User
// does, and the names are User's.
func (s *Symbolizer) Locate(ms []Mapping, addr uint64, ret bool) Location {
	loc, _, _ := s.locate(ms, addr, ret, "")
	return loc
}

// LocateStack places the addresses of a user stack of a process with
// mappings ms, innermost first, as Locate does each; an address whose
// frames are all Go wrappers the runtime leaves out (code.Model.Traceback)
// is left out, as runtime.Callers leaves it out of Go's own profiles.
func (s *Symbolizer) LocateStack(ms []Mapping, ips []uint64) []Location {
	out := make([]Location, 0, len(ips))
	callee := ""
	for i, ip := range ips {
		loc, fn, elided := s.locate(ms, ip, i > 0, callee)
		if !elided {
			out = append(out, loc)
		}
		callee = fn
	}
	return out
}

// locate is Locate of an address whose inner frame on the stack is in
// callee (see code.Model.Traceback); it also returns the name of the
// function holding the address ("" when none does), and whether all its
// frames were left out.
func (s *Symbolizer) locate(ms []Mapping, addr uint64, ret bool, callee string) (loc Location, fn string, elided bool) {
	look := addr
	if ret {
		look--
	}
	loc = Location{Addr: look}
	for i := range ms {
		mp := &ms[i]
		if look < mp.Start || look >= mp.End {
			continue
		}
		loc.Map = mp
		m := s.file(mp.Readable())
		if m == nil {
			loc.BuildID = s.buildID(mp.Readable())
			return loc, "", false
		}
		if m.ELF != nil {
			loc.BuildID = m.ELF.BuildID
		}
		va := look - mp.Bias
		host := m.Func(va)
		if host == nil {
			return loc, "", false
		}
		for _, f := range m.Traceback(va, callee) {
			name := f.Name
			if !f.Inline {
				name = displayName(host) // as User names the outermost frame
			}
			loc.Lines = append(loc.Lines, Line{Func: name, File: f.File, Line: f.Line})
		}
		return loc, host.Name, len(loc.Lines) == 0
	}
	return loc, "", false
}

// buildID reads path's build-id when its code could not be modelled.
func (s *Symbolizer) buildID(path string) string {
	ef, err := elfx.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	return ef.BuildID
}

// KernelSymbol is the kernel function holding addr and its start, from
// /proc/kallsyms; ok is false when none does.
func (s *Symbolizer) KernelSymbol(addr uint64) (name string, start uint64, ok bool) {
	if s.kernel == nil {
		s.kernel = readKallsyms()
	}
	i := sort.Search(len(s.kernel), func(i int) bool { return s.kernel[i].addr > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	return s.kernel[i].name, s.kernel[i].addr, true
}

// KernelBuildID is the running kernel's GNU build-id, from the ELF notes
// in /sys/kernel/notes; "" when unreadable.
func KernelBuildID() string {
	b, err := os.ReadFile("/sys/kernel/notes")
	if err != nil {
		return ""
	}
	le := binary.LittleEndian
	for len(b) >= 12 {
		nsz, dsz, typ := int(le.Uint32(b)), int(le.Uint32(b[4:])), le.Uint32(b[8:])
		name := 12 + (nsz+3)&^3
		end := name + (dsz+3)&^3
		if end > len(b) || nsz > len(b) {
			return ""
		}
		if typ == 3 && bytes.Equal(bytes.TrimRight(b[12:12+nsz], "\x00"), []byte("GNU")) {
			return hexString(b[name : name+dsz])
		}
		b = b[end:]
	}
	return ""
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// Module is the base name a mapping's frames carry in the other printers.
func (m *Mapping) Module() string { return filepath.Base(m.Path) }

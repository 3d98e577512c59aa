package pcln

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
)

// Field is a struct field as the runtime's type descriptor records it
// (what reflect reads): its name, byte offset and size in bytes.
type Field struct {
	Name         string
	Offset, Size uint64
}

// ErrNoTypes is returned when the runtime's type descriptors cannot be
// read: no module data, or a format before Go 1.19 or after Go 1.26.
var ErrNoTypes = errors.New("runtime type descriptors not read")

// Kinds and flags of the runtime's type descriptors (internal/abi).
const (
	kindPtr, kindStruct        = 22, 25
	tflagUncommon, tflagStar   = 1, 2
	typeSize, ptrElem          = 48, 48
	structPkg, structFields    = 48, 56
	structUncommon, fieldBytes = 80, 24
)

// Structs reads the layouts of the named struct types the binary's
// runtime type descriptors record, by qualified name (net/http.Request):
// every struct type reachable from the module's type links through
// pointers and fields. These descriptors are in every Go binary, stripped
// or not, for the types reflection or an interface may meet. Read for Go
// 1.19 to 1.26, whose field offsets are plain (Go 1.18 shifted them left
// by one); goVersion is the binary's (go1.19.8). ErrNoTypes otherwise.
func (t *Table) Structs(ef *elfx.File, goVersion string) (map[string][]Field, error) {
	types := 0
	switch {
	case t.md == nil || !minor19to26(goVersion):
		return nil, ErrNoTypes
	case t.magic == magic118:
		types = 35 // no covctrs
	case t.magic == magic120:
		types = 37
	default:
		return nil, ErrNoTypes
	}
	m := &mem{ef: ef, rel: t.rel, secs: map[*elf.Section][]byte{}}
	base, end := t.md[types], t.md[types+1]
	if base == 0 || end <= base {
		return nil, ErrNoTypes
	}
	// typelinks is the second slice (pointer, length, capacity) after
	// etypes: textsectmap comes first.
	var links, n uint64
	found := 0
	for i := types + 2; i+2 < len(t.md) && found < 2; i++ {
		if l := t.md[i+1]; l > 0 && l == t.md[i+2] && l < 1<<24 && m.section(t.md[i]) != nil {
			found++
			links, n = t.md[i], l
			i += 2
		}
	}
	if found < 2 {
		return nil, ErrNoTypes
	}
	r := &rtypes{m: m, base: base, seen: map[uint64]bool{}, out: map[string][]Field{}}
	raw := m.read(links, 4*n)
	for i := uint64(0); i+4 <= uint64(len(raw)); i += 4 {
		r.walk(base+uint64(int32(binary.LittleEndian.Uint32(raw[i:]))), 0)
	}
	return r.out, nil
}

func minor19to26(v string) bool {
	m := 0
	if rest, ok := strings.CutPrefix(v, "go1."); ok {
		for _, c := range rest {
			if c < '0' || c > '9' {
				break
			}
			m = m*10 + int(c-'0')
		}
	}
	return m >= 19 && m <= 26
}

// mem reads the file's allocated sections by virtual address, dynamic
// relocations applied.
type mem struct {
	ef   *elfx.File
	rel  map[uint64]uint64
	secs map[*elf.Section][]byte
}

func (m *mem) section(addr uint64) *elf.Section { return section(m.ef, addr) }

func (m *mem) read(addr, n uint64) []byte {
	s := m.section(addr)
	if s == nil {
		return nil
	}
	d, ok := m.secs[s]
	if !ok {
		d, _ = relocated(s, m.rel)
		m.secs[s] = d
	}
	off := addr - s.Addr
	if off+n > uint64(len(d)) {
		return nil
	}
	return d[off : off+n]
}

func (m *mem) u64(addr uint64) uint64 {
	if b := m.read(addr, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (m *mem) u32(addr uint64) uint32 {
	if b := m.read(addr, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// name reads an abi.Name at addr: a flags byte, a varint length, the
// bytes.
func (m *mem) name(addr uint64) string {
	hdr := m.read(addr, 11)
	if len(hdr) < 2 {
		return ""
	}
	l, k := binary.Uvarint(hdr[1:])
	if k <= 0 || l > 1<<16 {
		return ""
	}
	return string(m.read(addr+1+uint64(k), l))
}

type rtypes struct {
	m    *mem
	base uint64
	seen map[uint64]bool
	out  map[string][]Field
}

// walk records the struct type at t, and those its pointers and fields
// lead to (depth-bounded).
func (r *rtypes) walk(t uint64, depth int) {
	if t == 0 || r.seen[t] || depth > 16 {
		return
	}
	r.seen[t] = true
	hdr := r.m.read(t, typeSize)
	if hdr == nil {
		return
	}
	switch hdr[23] & 0x1f {
	case kindPtr:
		r.walk(r.m.u64(t+ptrElem), depth+1)
	case kindStruct:
		fields := r.m.u64(t + structFields)
		n := r.m.u64(t + structFields + 8)
		if n > 1<<12 {
			return
		}
		var fs []Field
		for i := uint64(0); i < n; i++ {
			f := fields + i*fieldBytes
			ft := r.m.u64(f + 8)
			fs = append(fs, Field{Name: r.m.name(r.m.u64(f)), Offset: r.m.u64(f + 16), Size: r.m.u64(ft)})
			r.walk(ft, depth+1)
		}
		if q := r.qualified(t, hdr); q != "" {
			r.out[q] = fs
		}
	}
}

// qualified is the struct type's pkgpath.Name; "" for an unnamed or
// generic one.
func (r *rtypes) qualified(t uint64, hdr []byte) string {
	tflag := hdr[20]
	if tflag&tflagUncommon == 0 {
		return ""
	}
	s := r.m.name(r.base + uint64(int32(binary.LittleEndian.Uint32(hdr[40:]))))
	if tflag&tflagStar != 0 && s != "" {
		s = s[1:]
	}
	if strings.ContainsAny(s, "[ {") {
		return ""
	}
	pkgOff := int32(r.m.u32(t + structUncommon))
	if pkgOff == 0 {
		return ""
	}
	pkg := r.m.name(r.base + uint64(pkgOff))
	if pkg == "" {
		return ""
	}
	return pkg + "." + s[strings.LastIndex(s, ".")+1:]
}

// Package btf loads BTF into the neutral model of package types: the running
// kernel's /sys/kernel/btf/vmlinux, kernel module BTF (split BTF on top of
// vmlinux), raw BTF files and the .BTF section of ELF files (BPF objects,
// binaries encoded with pahole -J). github.com/cilium/ebpf/btf reads the wire
// format; this package only converts.
//
// BTF records no alignment and no source language. Types are C; alignment
// that the layout cannot explain by natural alignment (a hole before a
// member larger than its type needs, tail padding beyond the members'
// alignment) is inferred as an explicit alignment, as pahole does.
package btf

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// KernelBTF is the running kernel's BTF.
const KernelBTF = "/sys/kernel/btf/vmlinux"

// Options tune Load. A nil *Options means the defaults.
type Options struct {
	// Base is the BTF that split BTF (a kernel module's) builds on. When
	// empty, files under /sys/kernel/btf other than vmlinux, and raw BTF
	// that does not load on its own, are read on top of KernelBTF.
	Base string
	// Standalone reads raw BTF as it is, never as split BTF on the
	// running kernel's.
	Standalone bool
	// Each, when not nil, is called with every named type as soon as it
	// and everything it refers to are converted, in the Spec's order. It
	// may hand the type to other goroutines: the loader never changes a
	// type it has passed to Each.
	Each func(types.Type)
	// EachOnly, with Each, keeps no types in the Spec Load returns (its
	// Path, Arch and the like only): the caller has them from Each.
	EachOnly bool
}

// keep reports whether Load keeps the types in its Spec.
func (o *Options) keep() bool { return !o.EachOnly || o.Each == nil }

// Load reads every named type of the BTF at path: raw BTF or an ELF file's
// .BTF section. Errors name the file in one line; a file without BTF gives
// an error wrapping types.ErrNoDebugInfo that says how to get it.
func Load(path string, opts *Options) (spec *types.Spec, err error) {
	defer func() { err = types.OneLine(err) }()
	if opts == nil {
		opts = &Options{}
	}
	if filepath.Clean(path) == KernelBTF && opts.Base == "" {
		// The kernel's BTF is mapped, not copied.
		if _, err := os.Stat(path); err != nil {
			return nil, readError(path, err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, readError(path, err)
		}
		ids, _ := namedComposites(raw)
		return convertSpec(path, func() (*cbtf.Spec, error) { return cbtf.LoadKernelSpec() },
			raw, ids, kernelArch(), 8, "raw BTF", opts.Each, opts.keep())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	return LoadBytes(data, path, opts)
}

// LoadBytes is Load for BTF or an ELF image already in memory; name is used
// in errors.
func LoadBytes(data []byte, name string, opts *Options) (spec *types.Spec, err error) {
	if opts == nil {
		opts = &Options{}
	}
	defer func() {
		if p := recover(); p != nil {
			spec, err = nil, fmt.Errorf("%s: section .BTF: corrupt BTF: %v", name, p)
		}
		err = types.OneLine(err)
	}()
	var (
		cs      *cbtf.Spec
		arch    = kernelArch()
		ptrSize = int64(8)
		section = "raw BTF"
		split   bool
	)
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		section = "section .BTF"
		ef, err := elfx.NewFile(bytes.NewReader(data), name)
		if err != nil {
			return nil, err
		}
		arch, ptrSize = ef.Arch(), ef.PointerSize()
		hasBTF := ef.Section(".BTF") != nil
		ef.Close()
		if !hasBTF {
			return nil, fmt.Errorf("%s: %w: no .BTF section (encode one with `pahole -J %s`, or read its DWARF with -F dwarf)",
				name, types.ErrNoDebugInfo, name)
		}
		cs, err = cbtf.LoadSpecFromReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, section, err)
		}
	case isRawBTF(data):
		cs, split, err = loadRaw(data, name, opts)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: not BTF: neither raw BTF (magic 0xeb9f) nor an ELF file", name)
	}
	var ids []uint32
	var raw []byte
	if section == "raw BTF" && !split {
		ids, _ = namedComposites(data)
		raw = data
	}
	return convertSpec(name, func() (*cbtf.Spec, error) { return cs, nil }, raw, ids, arch, ptrSize, section, opts.Each, opts.keep())
}

// convertSpec converts every named struct, union, enum and typedef of the
// spec load returns, recovering from panics in the decoder.
//
// ids, when not nil, are the type IDs to convert (see namedComposites);
// otherwise every type is decoded and the named ones kept. raw, when not
// nil, is the BTF load decodes, raw and not split: those IDs are then read
// straight from it (see rawBTF), and load is called only when that reader
// cannot.
func convertSpec(name string, load func() (*cbtf.Spec, error), raw []byte, ids []uint32, arch string, ptrSize int64, section string, each func(types.Type), keep bool) (spec *types.Spec, err error) {
	if raw != nil && ids != nil {
		if spec, err := convertRaw(name, raw, ids, arch, ptrSize, section, each, keep); !errors.Is(err, errRawFallback) {
			return spec, err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			spec, err = nil, fmt.Errorf("%s: %s: corrupt BTF: %v", name, section, p)
		}
	}()
	cs, err := load()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", name, section, err)
	}
	c := &converter{memo: make(map[cbtf.Type]types.Type, 1<<12), void: &types.Void{}, ptr: ptrSize}
	k := newSink(c, name, arch, ptrSize, section, each, keep)
	if ids != nil {
		for _, id := range ids {
			t, err := cs.TypeByID(cbtf.TypeID(id))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: type %d: %v", name, section, id, err)
			}
			if err := k.add(c.typ(t)); err != nil {
				return nil, err
			}
		}
		return k.spec, nil
	}
	for t, err := range cs.All() {
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, section, err)
		}
		switch t.(type) {
		case *cbtf.Struct, *cbtf.Union, *cbtf.Enum, *cbtf.Typedef:
		default:
			continue
		}
		if t.TypeName() == "" {
			continue
		}
		if err := k.add(c.typ(t)); err != nil {
			return nil, err
		}
	}
	return k.spec, nil
}

// convertRaw is convertSpec of the types ids of raw BTF, read by rawBTF;
// errRawFallback when that reader cannot, before any type reached each.
func convertRaw(name string, raw []byte, ids []uint32, arch string, ptrSize int64, section string, each func(types.Type), keep bool) (spec *types.Spec, err error) {
	r, err := parseRaw(raw)
	if err != nil {
		return nil, err
	}
	c := &rawConverter{converter: &converter{void: &types.Void{}, ptr: ptrSize}, r: r, memo: make([]types.Type, len(r.offs))}
	// parseRaw checked every reference and name the conversion follows:
	// types go to each as they are converted. A panic here is a bug of
	// this reader; before any type went to each, cilium/ebpf takes over.
	k := newSink(c.converter, name, arch, ptrSize, section, each, keep)
	handed := false
	defer func() {
		if p := recover(); p != nil {
			spec, err = nil, errRawFallback
			if handed {
				err = fmt.Errorf("%s: %s: corrupt BTF: %v", name, section, p)
			}
		}
	}()
	for _, id := range ids {
		t := c.typ(id)
		handed = true
		if err := k.add(t); err != nil {
			return nil, err
		}
	}
	return k.spec, nil
}

// sink checks each converted type, infers the alignments of the structs
// converted with it, and adds it to the spec and hands it to each.
type sink struct {
	c       *converter
	spec    *types.Spec
	check   types.Checker
	name    string
	section string
	each    func(types.Type)
	keep    bool // add the types to spec
}

func newSink(c *converter, name, arch string, ptrSize int64, section string, each func(types.Type), keep bool) *sink {
	return &sink{c: c, name: name, section: section, each: each, keep: keep,
		spec: &types.Spec{Path: name, Format: "btf", Arch: arch, PointerSize: ptrSize, Lang: types.LangC}}
}

func (k *sink) add(t types.Type) error {
	if err := k.check.Check(t); err != nil {
		return fmt.Errorf("%s: %s: %v", k.name, k.section, err)
	}
	k.c.inferAligns()
	if k.keep {
		k.spec.Add(t)
	}
	if k.each != nil {
		k.each(t)
	}
	return nil
}

// loadRaw reads raw BTF, on top of a base when it is split BTF.
func loadRaw(data []byte, name string, opts *Options) (cs *cbtf.Spec, split bool, err error) {
	base := opts.Base
	if base == "" && isModuleBTF(name) {
		base = KernelBTF
	}
	if base == "" {
		cs, err := cbtf.LoadSpecFromReader(bytes.NewReader(data))
		if err == nil {
			return cs, false, nil
		}
		// A module's BTF copied elsewhere refers to vmlinux type IDs:
		// try it as split BTF on the running kernel's.
		if _, serr := os.Stat(KernelBTF); serr != nil || name == KernelBTF || opts.Standalone {
			return nil, false, fmt.Errorf("%s: raw BTF: %v", name, err)
		}
		if cs, serr := loadSplit(data, KernelBTF); serr == nil {
			return cs, true, nil
		}
		return nil, false, fmt.Errorf("%s: raw BTF: %v (nor is it split BTF on %s; name its base with --btf_base)", name, err, KernelBTF)
	}
	cs, err = loadSplit(data, base)
	if err != nil {
		return nil, false, fmt.Errorf("%s: split BTF on %s: %v", name, base, err)
	}
	return cs, true, nil
}

func loadSplit(data []byte, basePath string) (*cbtf.Spec, error) {
	var base *cbtf.Spec
	var err error
	if basePath == KernelBTF {
		base, err = cbtf.LoadKernelSpec()
	} else {
		base, err = cbtf.LoadSpec(basePath)
	}
	if err != nil {
		return nil, fmt.Errorf("base %s: %v", basePath, err)
	}
	return cbtf.LoadSplitSpecFromReader(bytes.NewReader(data), base)
}

func isModuleBTF(path string) bool {
	dir, file := filepath.Split(filepath.Clean(path))
	return filepath.Clean(dir) == filepath.Dir(KernelBTF) && file != filepath.Base(KernelBTF)
}

func isRawBTF(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0x9f, 0xeb}) || bytes.HasPrefix(b, []byte{0xeb, 0x9f})
}

// IsRaw reports whether b starts with the raw BTF magic, in either byte order.
func IsRaw(b []byte) bool { return isRawBTF(b) }

func readError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, os.ErrNotExist) && path == KernelBTF {
		return fmt.Errorf("%s: %v (the running kernel has no BTF: it needs CONFIG_DEBUG_INFO_BTF=y; name a file instead)", path, err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

// kernelArch names the architecture of kernel BTF, which does not say it.
func kernelArch() string { return arch.HostName() }

// converter turns cilium/ebpf types into model types. Each BTF type is
// converted once; the model value is recorded before its parts are, so
// cycles through pointers (and corrupt cycles through anything) end.
type converter struct {
	memo map[cbtf.Type]types.Type
	void *types.Void
	ptr  int64
	// pending are the structs converted since the last inferAligns, each
	// after the structs it holds by value.
	pending []*types.Struct
	align   types.Aligner
}

// inferAligns infers the alignment of the structs converted since its last
// call (see inferAlign), members first. It walks member types, so it runs
// only once types.Checker has accepted them.
func (c *converter) inferAligns() {
	for _, s := range c.pending {
		if inferAlign(s, &c.align) && c.align.Remembers(s) {
			// What the aligner remembers may hold s's old alignment (a
			// struct holding s by value that s points to was inferred
			// first).
			c.align = types.Aligner{}
		}
	}
	c.pending = c.pending[:0]
}

func (c *converter) typ(t cbtf.Type) types.Type {
	if t == nil {
		return c.void
	}
	if m, ok := c.memo[t]; ok {
		return m
	}
	switch v := t.(type) {
	case *cbtf.Void:
		return c.void
	case *cbtf.Int:
		b := &types.Base{Name: v.Name, ByteSize: int64(v.Size), Encoding: intEncoding(v)}
		c.memo[t] = b
		return b
	case *cbtf.Float:
		b := &types.Base{Name: v.Name, ByteSize: int64(v.Size), Encoding: types.Float}
		c.memo[t] = b
		return b
	case *cbtf.Pointer:
		p := &types.Pointer{ByteSize: c.ptr}
		c.memo[t] = p
		p.Target = c.typ(v.Target)
		return p
	case *cbtf.Array:
		a := &types.Array{Count: int64(v.Nelems)}
		c.memo[t] = a
		a.Elem = c.typ(v.Type)
		return a
	case *cbtf.Typedef:
		td := &types.Typedef{Name: v.Name, Lang: types.LangC}
		c.memo[t] = td
		td.Target = c.typ(v.Type)
		return td
	case *cbtf.Const:
		return c.qual(t, types.Const, "", v.Type)
	case *cbtf.Volatile:
		return c.qual(t, types.Volatile, "", v.Type)
	case *cbtf.Restrict:
		return c.qual(t, types.Restrict, "", v.Type)
	case *cbtf.TypeTag:
		return c.qual(t, types.TypeTag, v.Value, v.Type)
	case *cbtf.Enum:
		e := &types.Enum{Name: v.Name, ByteSize: int64(v.Size), Signed: v.Signed, Lang: types.LangC}
		e.Values = make([]types.EnumValue, len(v.Values))
		for i, ev := range v.Values {
			e.Values[i] = types.EnumValue{Name: ev.Name, Value: int64(ev.Value)}
		}
		c.memo[t] = e
		return e
	case *cbtf.Fwd:
		s := &types.Struct{Name: v.Name, Incomplete: true, Lang: types.LangC}
		if v.Kind == cbtf.FwdUnion {
			s.Kind = types.KindUnion
		}
		c.memo[t] = s
		return s
	case *cbtf.Struct:
		return c.composite(t, types.KindStruct, v.Name, v.Size, v.Members, v.Tags)
	case *cbtf.Union:
		return c.composite(t, types.KindUnion, v.Name, v.Size, v.Members, v.Tags)
	case *cbtf.FuncProto:
		fp := &types.FuncProto{}
		c.memo[t] = fp
		fp.Return = c.typ(v.Return)
		for i, p := range v.Params {
			if i == len(v.Params)-1 && p.Name == "" {
				if _, ok := p.Type.(*cbtf.Void); ok || p.Type == nil {
					fp.Variadic = true
					break
				}
			}
			fp.Params = append(fp.Params, types.FuncParam{Name: p.Name, Type: c.typ(p.Type)})
		}
		return fp
	case *cbtf.Func:
		// A function's prototype; functions themselves are not types.
		return c.through(t, v.Type)
	case *cbtf.Var:
		return c.through(t, v.Type)
	}
	// Datasec and whatever a later BTF adds: opaque, with no size.
	return c.void
}

// through converts what t (a function, a variable) stands for: its type.
// Void stands in while it is converted, so corrupt BTF whose function is
// its own type ends.
func (c *converter) through(t, target cbtf.Type) types.Type {
	c.memo[t] = c.void
	r := c.typ(target)
	c.memo[t] = r
	return r
}

func (c *converter) qual(t cbtf.Type, k types.QualKind, tag string, target cbtf.Type) types.Type {
	q := &types.Qualifier{Kind: k, Tag: tag}
	c.memo[t] = q
	q.Target = c.typ(target)
	return q
}

func (c *converter) composite(t cbtf.Type, kind types.Kind, name string, size uint32, ms []cbtf.Member, tags []string) types.Type {
	s := &types.Struct{Kind: kind, Name: name, ByteSize: int64(size), Lang: types.LangC, Tags: tags}
	c.memo[t] = s
	s.Members = make([]types.Member, len(ms))
	for i, m := range ms {
		s.Members[i] = types.Member{
			Name:    m.Name,
			Type:    c.typ(m.Type),
			Offset:  types.Bits(m.Offset),
			BitSize: types.Bits(m.BitfieldSize),
			Tags:    m.Tags,
		}
	}
	c.pending = append(c.pending, s)
	return s
}

func intEncoding(v *cbtf.Int) types.Encoding { return intEncodingOf(v.Name, v.Encoding) }

func intEncodingOf(name string, enc cbtf.IntEncoding) types.Encoding {
	unsigned := strings.Contains(name, "unsigned")
	switch {
	case enc&cbtf.Bool != 0:
		return types.Bool
	case enc&cbtf.Char != 0 || name == "char" || name == "signed char" || name == "unsigned char":
		if unsigned {
			return types.UnsignedChar
		}
		return types.Char
	case enc&cbtf.Signed != 0:
		return types.Signed
	}
	return types.Unsigned
}

// inferAlign restores the explicit alignments BTF cannot record, from the
// layout they left: a member placed past the offset its type's alignment
// needs was aligned to the largest power of two dividing its offset, a
// struct whose size exceeds its members' end rounded to their alignment to
// the largest power of two dividing its size, and a forced member alignment
// beyond the others' makes the struct as aligned, as compilers record it.
// Kernel code aligns to cachelines far more often than to anything larger,
// so a hole shorter than a cacheline caps the guess at 64; a longer one
// allows up to a page (____cacheline_aligned vs __aligned(PAGE_SIZE)).
// Packed structs (a member off its natural alignment) and unions are left
// alone. It reports whether it set an alignment; al aligns the members.
func inferAlign(s *types.Struct, al *types.Aligner) (changed bool) {
	if s.Kind == types.KindUnion || len(s.Members) == 0 {
		return false
	}
	var end types.Bits
	natural, plain, forced := int64(1), int64(1), int64(0)
	for i := range s.Members {
		m := &s.Members[i]
		a := al.Alignof(m.Type)
		size, err := types.Sizeof(m.Type)
		if err != nil {
			return changed
		}
		// A zero-size member (an empty struct, a flexible array) takes no
		// room; the hole before it belongs to whatever follows.
		if size == 0 && m.BitSize == 0 {
			continue
		}
		if m.BitSize > 0 {
			end = max(end, m.Offset+m.BitSize)
			natural, plain = max(natural, a), max(plain, a)
			continue
		}
		if m.Offset%8 != 0 {
			return changed
		}
		off := m.Offset.Bytes()
		if off%a != 0 {
			return changed // packed
		}
		plain = max(plain, a)
		if from := (int64(end) + 7) / 8; off > roundUp(from, a) {
			if p := guessAlign(off, off-from); p > a {
				m.Align = p
				changed = true
				forced = max(forced, p)
				a = p
			}
		}
		natural = max(natural, a)
		end = max(end, m.Offset+types.Bits(size*8))
	}
	if natural > 1 && s.ByteSize%natural != 0 {
		return changed // packed
	}
	if forced > plain {
		s.Align = forced
		changed = true
	}
	if from := (int64(end) + 7) / 8; s.ByteSize > roundUp(from, natural) {
		if p := guessAlign(s.ByteSize, s.ByteSize-from); p > natural {
			s.Align = p
			changed = true
		}
	}
	return changed
}

// guessAlign is the largest power of two dividing off, at most a cacheline
// when the hole before off is shorter than one, at most a page otherwise.
func guessAlign(off, hole int64) int64 {
	limit := int64(64)
	if hole >= limit {
		limit = 4096
	}
	return min(off&-off, limit)
}

func roundUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

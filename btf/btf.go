// Package btf loads BTF into the neutral model of package types: the running
// kernel's /sys/kernel/btf/vmlinux, kernel module BTF (split BTF on top of
// vmlinux), raw BTF files and the .BTF section of ELF files (BPF objects,
// binaries encoded with pahole -J). github.com/cilium/ebpf/btf reads the wire
// format; this package only converts.
//
// BTF records no alignment and no source language. Types are C; explicit
// alignments are inferred from the layout as GCC records them in DWARF
// (see inferAlign): a hole before a member larger than its type needs,
// tail padding beyond the members' alignment, and what GCC propagates
// from an aligned member or member type.
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
	defer func() { err = types.OneLine(err) }()
	defer elfx.Catch(name, ".BTF", "BTF", &spec, &err) // cilium/ebpf's decoder
	s, err := decode(data, name, opts)
	if err != nil {
		return nil, err
	}
	var ids []uint32
	var raw []byte
	if s.section == "raw BTF" && !s.split {
		ids, _ = namedComposites(data)
		raw = data
	}
	return convertSpec(name, func() (*cbtf.Spec, error) { return s.cs, nil }, raw, ids, s.arch, s.ptrSize, s.section, opts.Each, opts.keep())
}

// decoded is BTF that cilium/ebpf decoded, with where it came from.
type decoded struct {
	cs      *cbtf.Spec
	arch    string
	ptrSize int64
	section string // "raw BTF" or "section .BTF"
	split   bool
}

// decode decodes data, raw BTF or an ELF file's .BTF section.
func decode(data []byte, name string, opts *Options) (*decoded, error) {
	s := &decoded{arch: kernelArch(), ptrSize: 8, section: "raw BTF"}
	var err error
	switch {
	case bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		s.section = "section .BTF"
		ef, err := elfx.NewFile(bytes.NewReader(data), name)
		if err != nil {
			return nil, err
		}
		s.arch, s.ptrSize = ef.Arch(), ef.PointerSize()
		hasBTF := ef.Section(".BTF") != nil
		ef.Close()
		if !hasBTF {
			return nil, fmt.Errorf("%s: %w: no .BTF section (encode one with `pahole -J %s`, or read its DWARF with -F dwarf)",
				name, types.ErrNoDebugInfo, name)
		}
		if s.cs, err = cbtf.LoadSpecFromReader(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, s.section, err)
		}
	case isRawBTF(data):
		if s.cs, s.split, err = loadRaw(data, name, opts); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: not BTF: neither raw BTF (magic 0xeb9f) nor an ELF file", name)
	}
	return s, nil
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
	sec, what := ".BTF", "BTF"
	if section != "section .BTF" {
		sec, what = "", section
	}
	defer elfx.Catch(name, sec, what, &spec, &err) // cilium/ebpf decodes lazily: its panics come while converting
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
// errRawFallback when that reader cannot (parseRaw says so before any
// type is converted).
func convertRaw(name string, raw []byte, ids []uint32, arch string, ptrSize int64, section string, each func(types.Type), keep bool) (spec *types.Spec, err error) {
	r, err := parseRaw(raw)
	if err != nil {
		return nil, err
	}
	c := &rawConverter{converter: &converter{void: &types.Void{}, ptr: ptrSize}, r: r, memo: make([]types.Type, len(r.offs))}
	// parseRaw checked every reference and name the conversion follows
	// (rawBTF.valid): converting cannot fail half-way, and types go to
	// each as they are converted.
	k := newSink(c.converter, name, arch, ptrSize, section, each, keep)
	for _, id := range ids {
		if err := k.add(c.typ(id)); err != nil {
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
// only once types.Checker has accepted them. Its cost is a correctness
// cost: 2.6 ms of the 17 of gopahole -C task_struct on the kernel's BTF
// (1,957 structs converted, most reached through pointers, which -p
// prints), the rise of bench/before.sh's C-task_struct-cold since cad3758.
func (c *converter) inferAligns() {
	for _, s := range byValueFirst(c.pending) {
		if inferAlign(s, &c.align) && c.align.Remembers(s) {
			// What the aligner remembers may hold s's old alignment (a
			// struct holding s by value that s points to was inferred
			// first).
			c.align = types.Aligner{}
		}
	}
	c.pending = c.pending[:0]
}

// byValueFirst orders structs so that each comes after those of them it
// holds by value (directly, in an array, through a typedef): a struct's
// inferred alignment aligns the members of its type. The converter
// appends a struct after its members' types, but not one it reached
// again through a pointer while converting it (struct rq holds a struct
// cfs_rq, which points back to rq).
func byValueFirst(structs []*types.Struct) []*types.Struct {
	in := make(map[*types.Struct]bool, len(structs))
	for _, s := range structs {
		in[s] = true
	}
	out := make([]*types.Struct, 0, len(structs))
	done := make(map[*types.Struct]bool, len(structs))
	var visit func(s *types.Struct, depth int)
	visit = func(s *types.Struct, depth int) {
		if done[s] || depth > types.MaxDepth {
			return
		}
		done[s] = true
		for _, m := range s.Members {
			if inner := heldStruct(m.Type); inner != nil && in[inner] {
				visit(inner, depth+1)
			}
		}
		out = append(out, s)
	}
	for _, s := range structs {
		visit(s, 0)
	}
	return out
}

// heldStruct is the struct or union t holds by value (t itself, an array
// of it, a typedef or qualifier of either), or nil.
func heldStruct(t types.Type) *types.Struct {
	for w := (types.Walk{}); w.Enter(t); {
		switch v := types.Resolve(t).(type) {
		case *types.Array:
			t = v.Elem
			continue
		case *types.Struct:
			return v
		}
		break
	}
	return nil
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
		td := &types.Typedef{Name: v.Name, Lang: types.LangC, Tags: v.Tags}
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
// layout they left, as GCC records them in DWARF (DW_AT_alignment, which
// pahole prints as __aligned__): a member sitting past the offset its
// type's alignment gives was aligned (pickAlign says to what), a member
// whose type is aligned is aligned as its type, a struct or union with an
// aligned member is aligned as its members are, and a struct whose size
// exceeds its members' end rounded to their alignment was aligned
// (pickAlign again). A zero-size member (a flexible array, an empty
// struct) takes no room but aligns the struct as its type does. Packed
// structs (a member off its natural alignment, a size no multiple of it)
// are left alone. It reports whether it set an alignment; al aligns the
// members.
func inferAlign(s *types.Struct, al *types.Aligner) (changed bool) {
	if len(s.Members) == 0 {
		return false
	}
	if s.Kind == types.KindUnion {
		return inferUnionAlign(s, al)
	}
	var end types.Bits
	natural, forced := int64(1), false
	for i := range s.Members {
		m := &s.Members[i]
		a := memberAlign(al, m.Type)
		size, err := types.Sizeof(m.Type)
		if err != nil {
			return changed
		}
		if m.BitSize > 0 || size == 0 {
			if m.BitSize > 0 {
				end = max(end, m.Offset+m.BitSize)
			} else if ua := userAlign(m.Type); ua > 0 {
				m.Align, forced, changed = ua, true, true
			}
			natural = max(natural, a)
			continue
		}
		if m.Offset%8 != 0 {
			return changed
		}
		off := m.Offset.Bytes()
		if off%a != 0 {
			return changed // packed
		}
		if ua := userAlign(m.Type); ua > 0 {
			m.Align, forced, changed = ua, true, true
		}
		if from := (int64(end) + 7) / 8; off > roundUp(from, a) {
			if p := pickAlign(off, off-from, a); p > a {
				m.Align, forced, changed = p, true, true
				a = p
			}
		}
		natural = max(natural, a)
		end = max(end, m.Offset+types.Bits(size*8))
	}
	if natural > 1 && s.ByteSize%natural != 0 {
		return changed // packed
	}
	if forced {
		s.Align = natural
	}
	if from := (int64(end) + 7) / 8; s.ByteSize > roundUp(from, natural) {
		if p := pickAlign(s.ByteSize, s.ByteSize-from, natural); p > natural {
			s.Align = p
			changed = true
		}
	}
	return changed
}

// inferUnionAlign is inferAlign of a union: its members sit at 0, so only
// an aligned member type aligns the member and the union.
func inferUnionAlign(s *types.Struct, al *types.Aligner) (changed bool) {
	natural := int64(1)
	for i := range s.Members {
		m := &s.Members[i]
		natural = max(natural, memberAlign(al, m.Type))
		if ua := userAlign(m.Type); ua > 0 {
			m.Align, changed = ua, true
		}
	}
	if changed {
		s.Align = natural
	}
	return changed
}

// userAlign is the alignment of t when t is (an array of, a typedef of) a
// struct or union with an explicit alignment; 0 otherwise.
func userAlign(t types.Type) int64 {
	if s := heldStruct(t); s != nil {
		return s.Align
	}
	return 0
}

// memberAlign is al.Alignof(t), but a struct whose size is no multiple
// of its members' alignment, which Alignof reads as packed (alignment 1),
// aligns to the largest power of two dividing its size and its members'
// offsets: BTF loses the alignment of a typedef (the kernel's compat_u64
// is a u64 aligned to 4, so struct compat_fs_qfilestat is 20 bytes).
func memberAlign(al *types.Aligner, t types.Type) int64 {
	a := al.Alignof(t)
	for w := (types.Walk{}); a == 1 && w.Enter(t); {
		switch v := types.Resolve(t).(type) {
		case *types.Array:
			t = v.Elem
			continue
		case *types.Struct:
			return unpackedAlign(al, v)
		}
		break
	}
	return a
}

// unpackedAlign is memberAlign of a struct Alignof reads as packed: 1
// when a member is off a byte boundary or the struct is a union.
func unpackedAlign(al *types.Aligner, s *types.Struct) int64 {
	if s.Kind == types.KindUnion || s.Packed || s.ByteSize <= 0 {
		return 1
	}
	g, most := s.ByteSize&-s.ByteSize, int64(1)
	for _, m := range s.Members {
		if m.BitSize == 0 && m.Offset%8 != 0 {
			return 1
		}
		if off := m.Offset.Bytes(); off > 0 {
			g = min(g, off&-off)
		}
		most = max(most, al.Alignof(m.Type))
	}
	return min(g, most)
}

// pickAlign chooses the alignment that put something at off after a hole
// of hole bytes, when its natural alignment was natural: among the powers
// of two A > natural, A > hole, dividing off, a cacheline (64) when it is
// one of them (the kernel's ____cacheline_aligned), else the smallest of
// them that is at least 8 (sizeof(long): __aligned(8), __aligned(16)
// = 2 * sizeof(u64)), else the largest. It returns 0 when no power of two
// explains the hole.
func pickAlign(off, hole, natural int64) int64 {
	largest := off & -off
	smallest := max(natural*2, int64(1))
	for smallest <= hole {
		smallest *= 2
	}
	switch {
	case smallest > largest:
		return 0
	case smallest <= 64 && 64 <= largest:
		return 64
	case max(smallest, 8) <= largest:
		return max(smallest, 8)
	}
	return largest
}

func roundUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

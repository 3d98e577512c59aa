package codegen

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/binscope/binscope/types"
)

// HeaderOptions tune WriteHeader. A nil *HeaderOptions means the defaults.
type HeaderOptions struct {
	// Source names the binary the types come from, for the header's
	// comment and the default include guard.
	Source  string
	BuildID string
	// Guard is the include guard macro; default BINSCOPE_<source>_H.
	Guard string
	// NoAsserts leaves out the _Static_asserts.
	NoAsserts bool
	// Generator names what wrote the header, for its first comment
	// (default "gopahole --format=c").
	Generator string
	// SkipAtomicTypedefs leaves out the typedefs of the base types older
	// compilers named after <stdatomic.h>'s types (atomic_int...), for a
	// compiler that defines them already.
	SkipAtomicTypedefs bool
}

// emission states of a type.
const (
	stNone = iota
	stForward
	stBusy
	stDone
)

type header struct {
	out     strings.Builder
	tags    *namer // struct, union and enum tags
	idents  *namer // typedef names and enumerators
	infos   map[types.Type]*typeInfo
	walk    types.Walk        // the path of define and declare
	pads    *namer            // padding names of the struct being written
	floats  map[string]string // opaqueFloat's definitions by name
	asserts bool
	offsets offsetAsserts // of the struct being written
	err     error
	align   types.Aligner
	// speller spells declarations (decl), its words indented by indent.
	speller types.CSpeller
	indent  string
	bodies  // bodies rendered later, in parallel (cheader_par.go)
	// atomics are the legacy atomic_ base types typedef'd already; nil
	// with HeaderOptions.SkipAtomicTypedefs.
	atomics map[string]bool
}

// WriteHeader writes a self-contained C header that defines roots and
// every type they depend on: types embedded by value come before their
// users, cycles are broken with forward declarations across pointers only,
// base types are spelled with C's own keywords (no system header needed),
// and names of any language are mapped by CName with the original name in
// a comment. Each struct reproduces the binary's layout exactly: explicit
// padding where the C compiler would place a member elsewhere, packed and
// aligned attributes where C's alignment rules differ. Unless
// opts.NoAsserts, a _Static_assert checks each type's size and each
// member's offset. The header compiles with clang -target bpf.
//
// It returns how the header spells each root in C ("struct X", "enum E",
// a typedef name), for code that uses the header.
func WriteHeader(w io.Writer, roots []types.Type, opts *HeaderOptions) (map[types.Type]string, error) {
	hw := NewHeaderWriter(opts, len(roots))
	for _, t := range roots {
		if err := hw.Add(t); err != nil {
			return nil, err
		}
	}
	return hw.Finish(w)
}

// A HeaderWriter writes the header WriteHeader writes with its roots handed
// over one by one, as a loader converts them: the header of a kernel's BTF
// is made while the rest loads. It keeps the header until Finish.
type HeaderWriter struct {
	h *header
	o HeaderOptions
	// roots and their spellings, in the order added: a header whose bodies
	// cannot be rendered apart is made again from roots.
	roots  []types.Type
	spells []string
}

// NewHeaderWriter starts a header of about roots roots (0 when unknown).
func NewHeaderWriter(opts *HeaderOptions, roots int) *HeaderWriter {
	var o HeaderOptions
	if opts != nil {
		o = *opts
	}
	return &HeaderWriter{h: newHeader(&o, roots, true), o: o, roots: make([]types.Type, 0, roots), spells: make([]string, 0, roots)}
}

// newHeader starts a header of about n roots; with deferBodies, named
// structs' bodies are rendered at the end, in parallel.
func newHeader(o *HeaderOptions, n int, deferBodies bool) *header {
	// Sized for a kernel's BTF: about as many tags and named types as roots,
	// four times as many enumerators, 700 bytes of header each (of which
	// the bodies are most).
	h := &header{tags: newNamerSized(n), idents: newNamerSized(4 * n), infos: make(map[types.Type]*typeInfo, 3*n),
		pads: newNamer(), floats: map[string]string{}, asserts: !o.NoAsserts}
	if !o.SkipAtomicTypedefs {
		h.atomics = map[string]bool{}
	}
	h.deferBodies, h.padsJob = deferBodies, -1
	if deferBodies {
		h.jobs = make([]bodyJob, 0, n+n/4)
		h.out.Grow(200 * n)
	} else {
		h.out.Grow(700 * n)
	}
	return h
}

// Add defines root t and what it needs. After an error the header is
// lost: Finish returns the error.
func (hw *HeaderWriter) Add(t types.Type) error {
	h := hw.h
	if h.err != nil {
		return h.err
	}
	h.define(t)
	if h.err != nil {
		return h.err
	}
	hw.roots = append(hw.roots, t)
	hw.spells = append(hw.spells, h.decl(t, "", ""))
	return nil
}

// Finish writes the header to w and returns how it spells each root (see
// WriteHeader).
func (hw *HeaderWriter) Finish(w io.Writer) (map[types.Type]string, error) {
	h, o := hw.h, hw.o
	if h.err != nil {
		return nil, h.err
	}
	parts := h.renderBodies()
	if h.bad {
		// A body needed what only the serial walk gives (an anonymous
		// enum's enumerator names): make the header again, in one pass.
		again := &HeaderWriter{h: newHeader(&o, len(hw.roots), false), o: o}
		for _, t := range hw.roots {
			if err := again.Add(t); err != nil {
				return nil, err
			}
		}
		return again.Finish(w)
	}
	spell := make(map[types.Type]string, len(hw.roots))
	for i, t := range hw.roots {
		spell[t] = hw.spells[i]
	}
	guard := o.Guard
	if guard == "" {
		base := o.Source
		if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		guard = "BINSCOPE_" + strings.ToUpper(CName(base)) + "_H"
	}
	var b strings.Builder
	by := o.Generator
	if by == "" {
		by = "gopahole --format=c"
	}
	b.WriteString("/* Generated by " + by)
	if o.Source != "" {
		b.WriteString(" from " + o.Source)
	}
	if o.BuildID != "" {
		b.WriteString(" (build-id " + o.BuildID + ")")
	}
	b.WriteString(".\n * Names: CName's mapping (:: -> __, other non-identifier bytes -> _); originals in comments.\n")
	b.WriteString(" * Layouts are the binary's: explicit padding and attributes, checked by _Static_assert. */\n")
	fmt.Fprintf(&b, "#ifndef %s\n#define %s\n\n", guard, guard)
	if len(h.floats) > 0 {
		names := make([]string, 0, len(h.floats))
		for n := range h.floats {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b.WriteString(h.floats[n])
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return spell, err
	}
	for _, part := range parts {
		if _, err := io.WriteString(w, part); err != nil {
			return spell, err
		}
	}
	_, err := io.WriteString(w, "#endif /* "+guard+" */\n")
	return spell, err
}

var errDepth = errors.New("type graph too deep to emit (cycle?)")

// enter puts t on the path of the walk over what the header needs: false,
// with h.err set, when t is on it already (a cycle no loader broke) or the
// path is too deep; false too after an error. The caller leaves t when
// enter returned true.
func (h *header) enter(t types.Type) bool {
	if h.err == nil && !h.walk.Enter(t) {
		h.err = errDepth
	}
	return h.err == nil
}

// define makes t usable by value: every type it embeds is defined first.
func (h *header) define(t types.Type) {
	if !h.enter(t) {
		return
	}
	defer h.walk.Leave()
	switch v := t.(type) {
	case *types.Base:
		if c := legacyAtomic(v); c != "" && h.atomics != nil && !h.atomics[v.Name] {
			h.atomics[v.Name] = true
			fmt.Fprintf(&h.out, "typedef _Atomic %s %s;\n", c, v.Name)
		}
	case *types.Qualifier:
		h.define(v.Target)
	case *types.Array:
		h.define(v.Elem)
	case *types.Pointer:
		h.declare(v.Target)
	case *types.FuncProto:
		if v.ByteSize == 0 { // a Go func value is spelled void *
			h.declareProto(v)
		}
	case *types.Typedef:
		h.typedef(v)
		h.define(v.Target) // by value: the struct it names too
	case *types.Enum:
		if v.Name != "" {
			h.enum(v)
		} else {
			h.anonEnum = true // its enumerators are named where it is written
		}
	case *types.Struct:
		if v.Name == "" { // defined inline where it is used
			h.members(v)
			return
		}
		in := h.info(v)
		switch in.state {
		case stDone:
			return
		case stBusy:
			h.err = fmt.Errorf("type %s contains itself by value", v.Name)
			return
		}
		h.tagOf(v)
		in.state = stBusy
		outer := h.anonEnum
		h.anonEnum = false
		h.members(v)
		if h.err != nil {
			return
		}
		h.structDef(v, h.anonEnum)
		h.anonEnum = outer
		in.state = stDone
	}
}

// declare makes t nameable behind a pointer: a forward declaration is
// enough for a struct or union. A named struct and a typedef do not go on
// the walk's path here: a pointer only refers to them, also from inside
// their own definitions (their states guard them).
func (h *header) declare(t types.Type) {
	switch v := t.(type) {
	case *types.Qualifier:
		if h.enter(v) {
			h.declare(v.Target)
			h.walk.Leave()
		}
	case *types.Struct:
		if v.Name == "" {
			if h.enter(v) {
				h.members(v)
				h.walk.Leave()
			}
			return
		}
		// Also while v is being defined: a function pointer among its
		// members may name it in a parameter list.
		if in := h.info(v); h.err == nil && in.state != stDone && !in.fwd {
			in.fwd = true
			if in.state == stNone {
				in.state = stForward
			}
			fmt.Fprintf(&h.out, "%s %s;\n", kw(v), h.tagOf(v))
		}
	case *types.Typedef:
		h.typedef(v)
	default:
		h.define(t)
	}
}

func (h *header) declareProto(p *types.FuncProto) {
	if p.Return != nil {
		h.declare(p.Return)
	}
	for _, a := range p.Params {
		h.declare(a.Type)
	}
}

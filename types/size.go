package types

import (
	"errors"
	"fmt"
)

// ErrCycle is returned when a walk over a type graph meets a type on its own
// path or goes deeper than MaxDepth (see Walk).
var ErrCycle = errors.New("type graph holds a cycle or nests deeper than MaxDepth")

// Resolve strips typedefs and qualifiers and returns the underlying type.
// It returns t itself when t is neither, and nil for a nil Type.
func Resolve(t Type) Type {
	switch t.(type) {
	case *Typedef, *Qualifier:
	default:
		return t
	}
	for w := (Walk{}); t != nil && w.Enter(t); {
		switch v := t.(type) {
		case *Typedef:
			t = v.Target
		case *Qualifier:
			t = v.Target
		default:
			return t
		}
	}
	return t
}

// Sizeof returns the size of t in bytes. Incomplete structs, void and
// flexible arrays have size 0. It returns ErrCycle for a graph without end.
func Sizeof(t Type) (int64, error) {
	var w Walk
	return sizeof(t, &w)
}

func sizeof(t Type, w *Walk) (int64, error) {
	switch t.(type) {
	case *Typedef, *Qualifier, *Array: // the others end the walk
	default:
		return sizeofEntered(t, w)
	}
	if !w.Enter(t) {
		return 0, ErrCycle
	}
	n, err := sizeofEntered(t, w)
	w.Leave()
	return n, err
}

func sizeofEntered(t Type, w *Walk) (int64, error) {
	switch v := t.(type) {
	case nil, *Void:
		return 0, nil
	case *Base:
		return v.ByteSize, nil
	case *Pointer:
		return v.ByteSize, nil
	case *Typedef:
		return sizeof(v.Target, w)
	case *Qualifier:
		return sizeof(v.Target, w)
	case *Array:
		if v.Count <= 0 {
			return 0, nil
		}
		n, err := sizeof(v.Elem, w)
		if err != nil {
			return 0, err
		}
		if n != 0 && v.Count > (1<<62)/n {
			return 0, fmt.Errorf("array of %d elements of %d bytes overflows", v.Count, n)
		}
		return n * v.Count, nil
	case *Enum:
		return v.ByteSize, nil
	case *Struct:
		return v.ByteSize, nil
	case *FuncProto:
		// A function value is a pointer-sized word in Go (its ByteSize),
		// and has no size in C.
		return v.ByteSize, nil
	}
	return 0, fmt.Errorf("sizeof: unknown type %T", t)
}

// MaxAlign is the largest natural alignment of a base type (x86-64 and
// arm64: long double, __int128, u128 align to 16).
const MaxAlign = 16

// Alignof returns the alignment of t in bytes, as a C or Go compiler on the
// binary's architecture would choose it: a base type aligns to its size (at
// most MaxAlign; a complex number to its half), an array to its element, a
// struct to its largest member unless it is packed, and an explicit
// DW_AT_alignment wins. It never returns less than 1.
func Alignof(t Type) int64 {
	var w alignWalk
	return alignof(t, &w)
}

// An Aligner is Alignof with a memory of the structs it has aligned, for
// callers that ask about the same types again and again (a layout's
// members, every struct of a header): a struct's members are walked once.
// The types must not change while it is in use. The zero Aligner is ready;
// it is not safe for concurrent use.
type Aligner struct {
	memo map[*Struct]int64
}

// Alignof is types.Alignof.
func (a *Aligner) Alignof(t Type) int64 {
	if a.memo == nil {
		a.memo = make(map[*Struct]int64)
	}
	w := alignWalk{memo: a.memo}
	return alignof(t, &w)
}

// Remembers reports whether a remembers the alignment of s: only then
// may what it remembers of other structs depend on s's members and
// alignment (a struct is remembered after the structs it holds by value).
func (a *Aligner) Remembers(s *Struct) bool {
	_, ok := a.memo[s]
	return ok
}

// alignWalk is the walk of alignof. With a memo, a struct's alignment is
// remembered when no Enter on its way failed (cut): only then does it not
// depend on the path that reached the struct.
type alignWalk struct {
	Walk
	memo map[*Struct]int64
	cut  bool
}

func alignof(t Type, w *alignWalk) int64 {
	switch t.(type) {
	case *Typedef, *Qualifier, *Array, *Struct:
	default:
		return alignofEntered(t, w)
	}
	if !w.Enter(t) {
		w.cut = true
		return 1
	}
	a := alignofEntered(t, w)
	w.Leave()
	return a
}

func alignofEntered(t Type, w *alignWalk) int64 {
	switch v := t.(type) {
	case *Base:
		n := v.ByteSize
		if v.Encoding == Complex {
			n /= 2
		}
		return clampAlign(n)
	case *Pointer:
		return clampAlign(v.ByteSize)
	case *Typedef:
		return alignof(v.Target, w)
	case *Qualifier:
		return alignof(v.Target, w)
	case *Array:
		return alignof(v.Elem, w)
	case *Enum:
		return clampAlign(v.ByteSize)
	case *FuncProto:
		return clampAlign(v.ByteSize)
	case *Struct:
		if v.Align > 0 {
			return v.Align
		}
		if v.Packed {
			return 1
		}
		if w.memo == nil {
			return structAlign(v, w)
		}
		if a, ok := w.memo[v]; ok {
			return a
		}
		cut := w.cut
		w.cut = false
		a := structAlign(v, w)
		if !w.cut {
			w.memo[v] = a
		}
		w.cut = w.cut || cut
		return a
	}
	return 1
}

// structAlign is alignofEntered of a struct that is neither packed nor
// explicitly aligned: its members'.
func structAlign(v *Struct, w *alignWalk) int64 {
	a := int64(1)
	for i := range v.Members {
		m := &v.Members[i]
		ma := m.Align
		if ma == 0 {
			ma = alignof(m.Type, w)
		}
		if m.BitSize == 0 && ma > 1 && m.Offset.Bytes()%ma != 0 {
			// A member off its natural alignment: the type is packed.
			return 1
		}
		if ma > a {
			a = ma
		}
	}
	if v.Variants != nil {
		for _, vr := range v.Variants.Variants {
			if va := alignof(vr.Member.Type, w); va > a {
				a = va
			}
		}
		if v.Variants.Tag != nil {
			if ta := alignof(v.Variants.Tag.Type, w); ta > a {
				a = ta
			}
		}
	}
	if v.ByteSize > 0 && v.ByteSize%a != 0 {
		return 1
	}
	return a
}

func clampAlign(n int64) int64 {
	switch {
	case n <= 1:
		return 1
	case n >= MaxAlign:
		return MaxAlign
	}
	// Round down to a power of two (a 12-byte long double on i386 aligns to 4).
	a := int64(1)
	for a*2 <= n {
		a *= 2
	}
	return a
}

// PointerBytes returns the length in bytes of the prefix of t that can hold
// pointers: the part of a value the Go garbage collector scans (the ptrdata
// that go vet's fieldalignment minimises). A type without pointers gives 0.
// Go strings, slices, interfaces, maps, channels and funcs hold pointers
// where their in-memory structs do.
func PointerBytes(t Type) int64 {
	var w Walk
	return ptrBytes(t, &w)
}

func ptrBytes(t Type, w *Walk) int64 {
	switch t.(type) {
	case *Typedef, *Qualifier, *Array, *Struct:
	default:
		return ptrBytesEntered(t, w)
	}
	if !w.Enter(t) {
		return 0
	}
	n := ptrBytesEntered(t, w)
	w.Leave()
	return n
}

func ptrBytesEntered(t Type, w *Walk) int64 {
	switch v := t.(type) {
	case *Pointer:
		return v.ByteSize
	case *FuncProto:
		return v.ByteSize
	case *Typedef:
		return ptrBytes(v.Target, w)
	case *Qualifier:
		return ptrBytes(v.Target, w)
	case *Array:
		if v.Count <= 0 {
			return 0
		}
		e := ptrBytes(v.Elem, w)
		if e == 0 {
			return 0
		}
		es, _ := sizeof(v.Elem, w)
		return es*(v.Count-1) + e
	case *Struct:
		var end int64
		for i := range v.Members {
			m := &v.Members[i]
			if p := ptrBytes(m.Type, w); p > 0 {
				if e := m.Offset.Bytes() + p; e > end {
					end = e
				}
			}
		}
		return end
	}
	return 0
}

// Expressible returns the type a struct member is written with in C (and
// in BTF, whose checks are C's): its own, or bytes where C cannot hold
// it. A member that starts at the end of the struct (Rust's unsized [u8] tail, a zero-size fn item described as
// a pointer) becomes a zero-length array of its type; one whose struct is
// only declared (a C++ base defined in another library) or that reaches
// beyond the end, an array of bytes up to the next member.
func Expressible(m Member, next []Member, size int64) Type {
	if m.BitSize != 0 {
		return m.Type
	}
	off := m.Offset.Bytes()
	if off >= size {
		if a, ok := Unqualified(m.Type).(*Array); ok && a.Count <= 0 {
			return m.Type
		}
		return &Array{Elem: m.Type, Count: 0}
	}
	msize, err := Sizeof(m.Type)
	st, isStruct := Resolve(m.Type).(*Struct)
	if !(isStruct && st.Incomplete) && err == nil && off+msize <= size {
		return m.Type
	}
	end := size
	for _, n := range next {
		if n.Offset.Bytes() > off {
			end = min(end, n.Offset.Bytes())
			break
		}
	}
	return &Array{Elem: &Base{Name: "unsigned char", ByteSize: 1}, Count: end - off}
}

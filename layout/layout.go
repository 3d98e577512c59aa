// Package layout analyses the memory layout of structs, unions, classes and
// Rust enums of the types model, and prints it: as pahole does (text), in
// each type's own language (native syntax) and as JSON.
//
// Compute, then print: Analyze returns an immutable *Layout (members in
// memory order, holes, bit holes, tail padding, bit padding, cachelines,
// sums); Reorganize derives a suggested member order from it; the printers
// (WriteText, WriteNative, WriteJSON, WriteReorganized, WriteSizes,
// WritePackable) only format. Neither knows whether a type came from DWARF or
// BTF.
//
// The accounting follows pahole's, so that its users find the numbers they
// know: a bitfield belongs to the storage unit of its declared type (an
// unsigned int bitfield at bit 52 lives in the 4-byte unit at byte 4, bit 20
// of it); a byte hole is attributed to the member before it; bits left unused
// inside a unit are bit holes, and those after the last bitfield of the type
// are bit padding. The invariant
//
//	Size*8 == (SumMembers+SumHoles+Padding)*8 + SumBits + SumBitHoles + BitPadding
//
// holds for every well-formed struct; when it does not, Layout.Warning says
// so (pahole's "BRAIN FART ALERT").
package layout

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/binscope/binscope/types"
)

// DefaultCachelineSize is the cacheline size in bytes used when
// Options.CachelineSize is 0.
const DefaultCachelineSize = 64

// ErrIncomplete is returned by Analyze for a forward declaration, which has
// no size and no members.
var ErrIncomplete = errors.New("incomplete type (declaration only)")

// Options configure Analyze and Reorganize. A nil *Options means the
// defaults.
type Options struct {
	// CachelineSize is the cacheline size in bytes (a power of two); 0
	// means DefaultCachelineSize.
	CachelineSize int64
}

func (o *Options) cacheline() int64 {
	if o == nil || o.CachelineSize <= 0 {
		return DefaultCachelineSize
	}
	return o.CachelineSize
}

// Layout is the analysed layout of one struct, union, class or Rust enum.
// All offsets and sizes are in bytes unless their type is types.Bits.
type Layout struct {
	// Type is the analysed type.
	Type *types.Struct
	// Name is the name the type is shown under: Type.Name, or the name of
	// the typedef that names an anonymous struct (the caller may set it).
	Name string
	Lang types.Lang
	Kind types.Kind

	Size  int64
	Align int64 // types.Alignof(Type)

	// Members holds the members in memory order (sorted by bit offset;
	// members at the same offset, as in a union, keep declaration order).
	Members []Slot
	// Tag and Variants describe a Rust enum (Type.Variants != nil): the
	// discriminant member (nil when the enum uses a niche) and each
	// variant's fields at offsets from the start of the enum.
	Tag      *Slot
	Variants []VariantLayout

	// Holes are byte holes between members (none in a union).
	Holes []Hole
	// BitHoles are unused bits inside bitfield storage units and between
	// bitfields.
	BitHoles []BitHole
	// Padding is the tail padding in bytes, after the last member (or the
	// last whole byte of bitfields) up to Size.
	Padding int64
	// BitPadding is the unused bits at the end of the last bitfield storage
	// unit when the type ends with bitfields (pahole's bit_padding).
	BitPadding types.Bits

	// SumMembers is the bytes of the non-bitfield members (for a union or
	// an enum, the bytes some member covers); SumBits the bits of the
	// bitfields; SumHoles and SumBitHoles the totals of Holes and BitHoles.
	SumMembers  int64
	SumBits     types.Bits
	SumHoles    int64
	SumBitHoles types.Bits

	// CachelineSize is the cacheline size used, Cachelines the number of
	// cachelines Size spans, and Boundaries says where each cacheline
	// boundary inside the type falls.
	CachelineSize int64
	Cachelines    int64
	Boundaries    []Boundary // the first MaxBoundaries

	// PointerBytes is types.PointerBytes(Type) for a Go type: the prefix
	// the garbage collector scans. It is 0 for other languages.
	PointerBytes int64
	// Packed is set when the type is packed: Type.Packed, or inferred as
	// pahole does (no holes nor padding, and a member off its natural
	// alignment or a size that is not a multiple of it).
	Packed bool

	// Warning is not empty when the invariant does not hold, or members
	// overlap or lie beyond Size: the debug info is inconsistent.
	Warning string

	// pahole's view of the holes, for the printers: the hole before the
	// first member.
	preHole    int64
	preBitHole types.Bits
}

// Slot is one member at its place in memory.
type Slot struct {
	Member *types.Member
	// Offset is the byte holding the member's first bit: BitOffset/8.
	Offset int64
	// Size is the size of the member's type in bytes; for a bitfield,
	// the size of its declared type (its storage unit).
	Size int64
	// UnitOffset is where a bitfield's storage unit starts, pahole's
	// numbering: the multiple of Size at or below Offset (an int
	// bitfield at bit 52 is in the unit at byte 4). It is Offset for any
	// other member.
	UnitOffset int64
	// BitOffset is the member's offset in bits from the start of the type
	// (types.Member.Offset, plus the variant's offset in an enum);
	// BitSize is a bitfield's width, 0 for any other member.
	BitOffset types.Bits
	BitSize   types.Bits
	// Align is the member's alignment in bytes: its explicit alignment or
	// that of its type.
	Align int64
	// Hole and BitHole are the byte and bit holes after this member.
	Hole    int64
	BitHole types.Bits
	// TypePadding is the tail padding of the member's type when that type
	// is directly a struct or class (pahole's "last struct has N bytes of
	// padding").
	TypePadding int64
	// Inner is the layout of an anonymous struct or union member (offsets
	// in it relative to the member), which the printers expand inline.
	Inner *Layout
}

// IsBitfield reports whether the slot is a bitfield.
func (s *Slot) IsBitfield() bool { return s.BitSize > 0 }

// End returns the first byte after the member: for a bitfield, the byte
// after its last bit.
func (s *Slot) End() int64 {
	if s.IsBitfield() {
		return (int64(s.BitOffset+s.BitSize) + 7) / 8
	}
	return s.Offset + s.Size
}

// Name returns the member's name ("" for an anonymous member).
func (s *Slot) Name() string { return s.Member.Name }

// Hole is a run of unused bytes inside a type.
type Hole struct {
	Offset, Size int64
}

// BitHole is a run of unused bits; Offset counts from the start of the type.
type BitHole struct {
	Offset, Size types.Bits
}

// MaxBoundaries bounds Layout.Boundaries: 65,536 cachelines (4 MiB with
// 64-byte lines) are more than any real type spans, and a corrupt size
// (BTF claiming gigabytes) must not cost memory per cacheline.
const MaxBoundaries = 1 << 16

// Boundary is a cacheline boundary inside a type.
type Boundary struct {
	// Line is the index of the cacheline that starts here (1 for the
	// second cacheline) and Offset its first byte.
	Line   int64
	Offset int64
	// Member is the index in Layout.Members of the member that starts at
	// the boundary or crosses it, or -1 when a hole or the padding is
	// there. Crosses is set when that member starts before the boundary.
	Member  int
	Crosses bool
}

// VariantLayout is one variant of a Rust enum.
type VariantLayout struct {
	// Name is the variant's name (Circle for Shape::Circle).
	Name string
	// Discr is the discriminant value that selects the variant; Default
	// marks the variant taken when no other matches.
	Discr   int64
	Default bool
	// DiscrBits, when not 0, says the tag is an unsigned integer of that
	// many bits: Discr is then the low DiscrBits of its bits read as
	// unsigned (DiscrString; a u64 niche 0x8000000000000000 is not
	// negative).
	DiscrBits int
	// Member is the variant's member of the enum (its type the variant's
	// struct); Members are the variant's fields at offsets from the start
	// of the enum, in memory order.
	Member  *types.Member
	Members []Slot
}

// String returns a one-line summary: name, size, holes and padding.
func (l *Layout) String() string {
	return fmt.Sprintf("%s %s: size %d, align %d, %d members, %d holes (%d bytes), %d bit holes (%d bits), padding %d",
		l.Kind, l.Name, l.Size, l.Align, len(l.Members), len(l.Holes), l.SumHoles, len(l.BitHoles), l.SumBitHoles, l.Padding)
}

// IsEnum reports whether the layout is a Rust enum with variants.
func (l *Layout) IsEnum() bool { return l.Type.Variants != nil }

// Invariant checks size = members + holes + padding, bits included, and
// returns an error saying by how much it fails, or nil.
func (l *Layout) Invariant() error {
	want := types.Bits(l.Size * 8)
	got := types.Bits((l.SumMembers+l.SumHoles+l.Padding)*8) + l.SumBits + l.SumBitHoles + l.BitPadding
	if got != want || l.Padding < 0 {
		return fmt.Errorf("%d bytes != %d (member bytes) + %d (member bits) + %d (byte holes) + %d (bit holes) + %d (padding) + %d (bit padding), diff = %d bits",
			l.Size, l.SumMembers, l.SumBits, l.SumHoles, l.SumBitHoles, l.Padding, l.BitPadding, want-got)
	}
	return nil
}

// DiscrString spells the discriminant value in its tag's signedness.
func (v *VariantLayout) DiscrString() string {
	if v.DiscrBits > 0 {
		u := uint64(v.Discr)
		if v.DiscrBits < 64 {
			u &= 1<<v.DiscrBits - 1
		}
		return strconv.FormatUint(u, 10)
	}
	return strconv.FormatInt(v.Discr, 10)
}

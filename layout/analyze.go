package layout

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/binscope/binscope/types"
)

// maxSize bounds the size of a type Analyze accepts (1 TiB): larger sizes
// come from corrupt debug info.
const maxSize = 1 << 40

// Analyze computes the layout of s: members in memory order, holes, bit
// holes, tail padding, bit padding, cachelines and sums. Anonymous struct
// and union members are analysed too (Slot.Inner). It returns an error
// wrapping ErrIncomplete for a declaration, types.ErrCycle for a type graph
// without end, and an error for absurd sizes or offsets; inconsistent
// layouts (members beyond the size, sums that do not add up) are not errors
// but set Layout.Warning.
func Analyze(s *types.Struct, opts *Options) (*Layout, error) {
	w := walker{cache: &analysisCache{}}
	l, err := analyze(s, opts.cacheline(), &w)
	if errors.Is(err, types.ErrCycle) {
		return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, types.ErrCycle)
	}
	return l, err
}

// analysisCache remembers what one analysis learns of the types its
// members share: the alignments and tail padding of the structs they hold.
type analysisCache struct {
	align types.Aligner
	tail  map[*types.Struct]int64
}

// tailPadding is tailPadding, remembered.
func (c *analysisCache) tailPadding(st *types.Struct) int64 {
	if p, ok := c.tail[st]; ok {
		return p
	}
	if c.tail == nil {
		c.tail = map[*types.Struct]int64{}
	}
	p := tailPadding(st)
	c.tail[st] = p
	return p
}

// walker guards the recursion of analyze into anonymous members, and
// remembers the alignments of the types it met.
type walker struct {
	types.Walk
	cache *analysisCache
}

// analyze analyses s; w guards the recursion into anonymous members.
func analyze(s *types.Struct, cl int64, w *walker) (*Layout, error) {
	if s == nil {
		return nil, errors.New("layout: nil struct")
	}
	if !w.Enter(s) {
		return nil, types.ErrCycle
	}
	defer w.Leave()
	if s.Incomplete {
		return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, ErrIncomplete)
	}
	if s.ByteSize < 0 || s.ByteSize > maxSize {
		return nil, fmt.Errorf("%s %s: absurd size %d", s.Kind, s.Name, s.ByteSize)
	}
	l := &Layout{
		Type:          s,
		Name:          s.Name,
		Lang:          s.Lang,
		Kind:          s.Kind,
		Size:          s.ByteSize,
		Align:         w.cache.align.Alignof(s),
		CachelineSize: cl,
	}
	if s.Lang == types.LangGo {
		l.PointerBytes = types.PointerBytes(s)
	}
	var err error
	l.Members, err = makeSlots(s.Members, 0, cl, w)
	if errors.Is(err, types.ErrCycle) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, err)
	}
	switch {
	case s.Variants != nil:
		if err := l.variants(cl, w); err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, err)
		}
		l.coverage()
	case s.Kind == types.KindUnion:
		l.coverage()
	default:
		l.findHoles()
		l.Packed = s.Packed || l.inferPacked()
	}
	if l.Size > 0 {
		l.Cachelines = (l.Size + cl - 1) / cl
	}
	l.boundaries()
	if l.Padding < 0 {
		l.Warning = fmt.Sprintf("members end %d bytes beyond the size, %d bytes", -l.Padding, l.Size)
	} else if err := l.Invariant(); err != nil {
		l.Warning = "size does not add up: " + err.Error()
	}
	return l, nil
}

// makeSlots returns slots for members, their offsets moved by base bits,
// sorted into memory order.
func makeSlots(members []types.Member, base types.Bits, cl int64, w *walker) ([]Slot, error) {
	slots := make([]Slot, len(members))
	for i := range members {
		m := &members[i]
		size, err := types.Sizeof(m.Type)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", m.Name, err)
		}
		off := base + m.Offset
		if size < 0 || size > maxSize || off < 0 || int64(off) > maxSize*8 || m.BitSize < 0 || m.BitSize > 1<<16 {
			return nil, fmt.Errorf("member %s: absurd offset %d bits or size %d bytes", m.Name, off, size)
		}
		sl := Slot{Member: m, Size: size, BitOffset: off, BitSize: m.BitSize, Offset: off.Bytes()}
		sl.UnitOffset = sl.Offset
		if sl.BitSize > 0 && size > 0 {
			sl.UnitOffset = int64(off) / (size * 8) * size
		}
		sl.Align = m.Align
		if sl.Align <= 0 {
			sl.Align = w.cache.align.Alignof(m.Type)
		}
		if st, ok := types.Unqualified(m.Type).(*types.Struct); ok && !st.Incomplete {
			if st.Name == "" {
				inner, err := analyze(st, cl, w)
				if errors.Is(err, types.ErrCycle) {
					return nil, err
				}
				if err != nil {
					return nil, fmt.Errorf("member %s: %w", m.Name, err)
				}
				sl.Inner = inner
				sl.TypePadding = inner.Padding
			} else if st.Kind != types.KindUnion && st.Variants == nil {
				sl.TypePadding = w.cache.tailPadding(st)
			}
		}
		slots[i] = sl
	}
	sortSlots(slots)
	return slots, nil
}

// sortSlots puts slots in memory order, keeping the order of those at the
// same bit offset.
func sortSlots(slots []Slot) {
	byOffset := func(a, b Slot) int { return cmp.Compare(a.BitOffset, b.BitOffset) }
	slices.SortStableFunc(slots, byOffset)
}

// tailPadding returns the tail padding of struct st as findHoles counts it,
// without analysing st's members further.
func tailPadding(st *types.Struct) int64 {
	slots := make([]Slot, 0, len(st.Members))
	for i := range st.Members {
		m := &st.Members[i]
		size, err := types.Sizeof(m.Type)
		if err != nil || size < 0 || m.Offset < 0 {
			return 0
		}
		sl := Slot{Member: m, Size: size, BitOffset: m.Offset, BitSize: m.BitSize, Offset: m.Offset.Bytes()}
		sl.UnitOffset = sl.Offset
		if sl.BitSize > 0 && size > 0 {
			sl.UnitOffset = int64(m.Offset) / (size * 8) * size
		}
		slots = append(slots, sl)
	}
	sortSlots(slots)
	t := &Layout{Size: st.ByteSize, Members: slots}
	t.findHoles()
	if t.Padding < 0 {
		return 0
	}
	return t.Padding
}

// findHoles computes holes, bit holes, padding and bit padding of a struct
// the way pahole does (class__find_holes), members in memory order. A byte
// hole goes to the member before it; bits a bitfield storage unit leaves
// unused before the next member are that member's bit hole.
func (l *Layout) findHoles() {
	h := holeScan{size: types.Bits(l.Size * 8)}
	h.curEnd = h.size
	var last *Slot
	l.Holes, l.BitHoles = nil, nil
	l.SumMembers, l.SumBits, l.SumHoles, l.SumBitHoles = 0, 0, 0, 0
	for i := range l.Members {
		pos := &l.Members[i]
		pos.Hole, pos.BitHole = 0, 0
		end := h.end(pos)
		byteHoleAt, byteHoles, bitHoleAt, bitHoles := h.holesBefore(pos)
		if pos.IsBitfield() {
			l.SumBits += pos.BitSize
		} else if end > h.lastSeen {
			from := max(pos.BitOffset, h.lastSeen)
			l.SumMembers += int64(end-from) / 8
		}
		h.pass(pos, end)
		if last != nil {
			last.Hole, last.BitHole = byteHoles, bitHoles
		} else {
			l.preHole, l.preBitHole = byteHoles, bitHoles
		}
		if bitHoles > 0 {
			l.BitHoles = append(l.BitHoles, BitHole{Offset: bitHoleAt, Size: bitHoles})
			l.SumBitHoles += bitHoles
		}
		if byteHoles > 0 {
			l.Holes = append(l.Holes, Hole{Offset: byteHoleAt, Size: byteHoles})
			l.SumHoles += byteHoles
		}
		last = pos
	}
	l.BitPadding = 0
	if h.inBitfield {
		bfEnd := min(h.size, h.curEnd)
		if bfEnd > h.lastSeen {
			l.BitPadding = bfEnd - h.lastSeen
			h.lastSeen = bfEnd
		}
	}
	l.Padding = l.Size - h.lastSeen.Bytes()
}

// holeScan is what findHoles keeps as it walks the members in memory
// order, as pahole's class__find_holes does.
type holeScan struct {
	size       types.Bits // of the struct
	curEnd     types.Bits // end of the current bitfield storage unit
	curUnit    types.Bits // size of the current bitfield storage unit
	lastSeen   types.Bits // end of what the members so far cover
	inBitfield bool       // the member before was a bitfield
}

// end is where member pos ends.
func (h *holeScan) end(pos *Slot) types.Bits {
	start := pos.BitOffset
	switch {
	case pos.IsBitfield():
		return start + pos.BitSize
	case start >= h.size && h.size > 0:
		// A member at the end of the type is its unsized tail (a Rust
		// DST's slice, which DWARF gives one element): it takes no bytes
		// of the type, as a flexible array.
		return start
	}
	return start + types.Bits(pos.Size*8)
}

// holesBefore returns the byte hole and the bit hole before member pos,
// each where it starts and its size (0 for none), and moves lastSeen past
// the trailing bits of the storage unit before pos and the bytes up to
// the unit of a bitfield.
func (h *holeScan) holesBefore(pos *Slot) (byteHoleAt, byteHoles int64, bitHoleAt, bitHoles types.Bits) {
	start := pos.BitOffset
	bitHoleAt = h.lastSeen
	if h.inBitfield {
		// Trailing bits of the previous storage unit.
		bfEnd := min(start, h.curEnd)
		bitHoles = bfEnd - h.lastSeen
		h.lastSeen = bfEnd
	}
	if pos.IsBitfield() {
		aligned := types.Bits(pos.UnitOffset * 8)
		if h.lastSeen < aligned && aligned <= start {
			byteHoleAt = h.lastSeen.Bytes()
			byteHoles = pos.UnitOffset - h.lastSeen.Bytes()
			h.lastSeen = aligned
		}
		if bitHoles <= 0 {
			bitHoleAt = h.lastSeen
		}
		bitHoles += start - h.lastSeen
	} else {
		byteHoleAt = h.lastSeen.Bytes()
		byteHoles = start.Bytes() - h.lastSeen.Bytes()
	}
	// Members that overlap what came before (a C++ empty base, a
	// zero-size field) count only for the bytes they add.
	return byteHoleAt, max(byteHoles, 0), bitHoleAt, max(bitHoles, 0)
}

// pass moves past member pos, which ends at end: what is covered, and the
// bitfield storage unit it opens or continues.
func (h *holeScan) pass(pos *Slot, end types.Bits) {
	h.lastSeen = max(end, h.lastSeen)
	if !pos.IsBitfield() {
		h.inBitfield = false
		h.curUnit = 0
		h.curEnd = end
		return
	}
	h.inBitfield = true
	unit := types.Bits(pos.Size * 8)
	if end > h.curEnd || unit > h.curUnit {
		h.curUnit = unit
		h.curEnd = types.Bits(pos.UnitOffset*8) + h.curUnit
		// A bitfield that borrowed bits from the previous unit ends in
		// the next one.
		if end > h.curEnd {
			h.curEnd += h.curUnit
		}
	}
}

// coverage computes the holes and padding of a union or a Rust enum: the
// bytes no member, tag nor variant field covers. Members overlap, so sums
// count covered bytes once.
func (l *Layout) coverage() {
	type span struct{ from, to int64 }
	var spans []span
	add := func(ss []Slot) {
		for i := range ss {
			if e := ss[i].End(); e > ss[i].Offset {
				spans = append(spans, span{ss[i].Offset, e})
			}
		}
	}
	add(l.Members)
	if l.Tag != nil {
		add([]Slot{*l.Tag})
	}
	for i := range l.Variants {
		add(l.Variants[i].Members)
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].from != spans[j].from {
			return spans[i].from < spans[j].from
		}
		return spans[i].to < spans[j].to
	})
	l.Holes, l.BitHoles = nil, nil
	l.SumMembers, l.SumHoles = 0, 0
	var end int64
	for _, s := range spans {
		if s.from > end {
			l.Holes = append(l.Holes, Hole{Offset: end, Size: s.from - end})
			l.SumHoles += s.from - end
		}
		if s.to > end {
			l.SumMembers += s.to - max(s.from, end)
			end = s.to
		}
	}
	l.Padding = l.Size - end
}

// variants fills Tag and Variants of a Rust enum.
func (l *Layout) variants(cl int64, w *walker) error {
	vp := l.Type.Variants
	if vp.Tag != nil {
		tag, err := makeSlots([]types.Member{*vp.Tag}, 0, cl, w)
		if err != nil {
			return err
		}
		tag[0].Member = vp.Tag
		l.Tag = &tag[0]
	}
	bits := 0
	if vp.Tag != nil {
		if b, ok := types.Resolve(vp.Tag.Type).(*types.Base); ok && (b.Encoding == types.Unsigned || b.Encoding == types.UnsignedChar) && b.ByteSize > 0 && b.ByteSize <= 8 {
			bits = int(b.ByteSize * 8)
		}
	}
	for i := range vp.Variants {
		v := &vp.Variants[i]
		vl := VariantLayout{Name: v.Member.Name, Discr: v.Discr, DiscrBits: bits, Default: v.Default, Member: &v.Member}
		if st, ok := types.Resolve(v.Member.Type).(*types.Struct); ok && !st.Incomplete {
			ms, err := makeSlots(st.Members, v.Member.Offset, cl, w)
			if err != nil {
				return fmt.Errorf("variant %s: %w", v.Member.Name, err)
			}
			vl.Members = ms
		} else if v.Member.Type != nil {
			ms, err := makeSlots([]types.Member{v.Member}, 0, cl, w)
			if err != nil {
				return fmt.Errorf("variant %s: %w", v.Member.Name, err)
			}
			ms[0].Member = &v.Member
			vl.Members = ms
		}
		if vl.Name == "" {
			vl.Name = types.ShortName(types.TypeString(v.Member.Type))
		}
		l.Variants = append(l.Variants, vl)
	}
	return nil
}

// boundaries finds the member at each cacheline boundary inside the type.
func (l *Layout) boundaries() {
	cl := l.CachelineSize
	if n := min((l.Size-1)/cl, MaxBoundaries); n > 0 {
		l.Boundaries = make([]Boundary, 0, n)
	}
	for line := int64(1); line*cl < l.Size && line <= MaxBoundaries; line++ {
		b := Boundary{Line: line, Offset: line * cl, Member: -1}
		for i := range l.Members {
			s := &l.Members[i]
			if s.Offset > b.Offset {
				break // members are in memory order: none further starts before
			}
			if b.Offset < s.End() {
				b.Member = i
				b.Crosses = s.BitOffset < types.Bits(b.Offset*8)
				break
			}
		}
		l.Boundaries = append(l.Boundaries, b)
	}
}

// inferPacked reports whether a struct without holes nor padding is packed,
// as pahole infers it: a member off its natural alignment, or a size that
// is not a multiple of the largest natural alignment.
func (l *Layout) inferPacked() bool {
	if l.Padding != 0 || len(l.Holes) != 0 {
		return false
	}
	maxAlign := int64(1)
	for i := range l.Members {
		s := &l.Members[i]
		var w types.Walk
		a := naturalAlign(s.Member.Type, &w)
		if a <= 1 {
			continue
		}
		maxAlign = max(maxAlign, a)
		if s.UnitOffset%a != 0 {
			return true
		}
	}
	return (maxAlign != 1 && l.Type.Align == 1) || l.Size%maxAlign != 0
}

// naturalAlign is pahole's natural alignment: that of the type without
// explicit alignment attributes (a struct aligns to its most aligned
// member).
func naturalAlign(t types.Type, w *types.Walk) int64 {
	if !w.Enter(t) {
		return 1
	}
	defer w.Leave()
	var a int64
	switch v := types.Resolve(t).(type) {
	case *types.Pointer:
		a = v.ByteSize
	case *types.Base:
		a = v.ByteSize
	case *types.Enum:
		a = v.ByteSize
	case *types.Array:
		a = naturalAlign(v.Elem, w)
	case *types.Struct:
		for i := range v.Members {
			a = max(a, naturalAlign(v.Members[i].Type, w))
		}
	}
	return max(a, 1)
}

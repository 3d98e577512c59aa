package pcln

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/binscope/binscope/internal/elfx"
)

// InlinedCall is one entry of a function's inline tree in .gopclntab (the
// runtime's inlinedCall, Go 1.16 and later): a call the compiler inlined,
// which the runtime's tracebacks show as a frame.
type InlinedCall struct {
	// Index is the entry's index in its function's tree; Parent the
	// index of the inlined call that holds it, -1 for one directly in the
	// function.
	Index, Parent int
	// Callee is the inlined function's name.
	Callee string
	// PC is the address of the call's inline mark: an instruction of the
	// caller whose source position is the call site, which runs once each
	// time the call is made (cmd/compile places it at the start of the
	// inlined body; the runtime's traceback reads it as the call's PC).
	PC uint64
	// Ranges are the addresses whose innermost inlined call is this one
	// or one it holds, in address order; empty when the body left no
	// code of its own.
	Ranges [][2]uint64
	// File and Line are the call site.
	File string
	Line int
	// Wrapper marks a callee the compiler made (see Table.Wrappers),
	// which the runtime's tracebacks leave out.
	Wrapper bool
}

// Tree is the inline tree of every function that has one, by entry
// address.
type Tree map[uint64][]InlinedCall

const (
	pcdataInlTreeIndex = 2
	funcdataInlTree    = 3
	magic120           = 0xfffffff1 // Go 1.20 and later
)

// inlFormat is where a table's header, functab, _func and inlinedCall
// keep what the inline reader needs (runtime/runtime2.go,
// runtime/symtab.go of each version).
type inlFormat struct {
	// Header words: offsets from the table of funcnametab, pctab and
	// pclntable (whose start is the functab).
	funcnames, pctab, pcln int
	// ftabEntry is a functab entry's size: {entry, funcoff uintptr} (16,
	// the entry an address) before Go 1.18, {entryoff, funcoff uint32}
	// (8, the entry an offset from runtime.text) after.
	ftabEntry int
	// _func's nameoff, pcsp and npcdata words, its size and its
	// nfuncdata byte (whose funcID is 3 bytes before).
	fnName, pcsp, npcdata, funcSize, nfuncdata int
	// ptrFuncdata: funcdata are addresses (8 bytes, 8-aligned after the
	// pcdata) before Go 1.18, offsets from go:func.* (4 bytes) after.
	ptrFuncdata    bool
	callSize       int // inlinedCall's size
	name, parentPc int // inlinedCall's name offset and parentPc
	callFuncID     int // inlinedCall's funcID byte
	parent         int // its explicit parent (int16), or -1: from pcdata at parentPc
}

var (
	// Go 1.20 and later: _func gained startLine; inlinedCall is
	// {funcID, _ [3]byte, nameOff, parentPc, startLine}.
	inl120 = inlFormat{funcnames: 32, pctab: 56, pcln: 64, ftabEntry: 8, fnName: 4,
		pcsp: 16, npcdata: 28, funcSize: 44, nfuncdata: 43, callSize: 16, name: 4, parentPc: 8, parent: -1}
	// Go 1.18 and 1.19: _func is {entryoff, nameoff, args, deferreturn,
	// pcsp, pcfile, pcln, npcdata, cuOffset, funcID, flag, _,
	// nfuncdata}; inlinedCall is {parent int16, funcID, _, file, line,
	// func_, parentPc}.
	inl118 = inlFormat{funcnames: 32, pctab: 56, pcln: 64, ftabEntry: 8, fnName: 4,
		pcsp: 16, npcdata: 28, funcSize: 40, nfuncdata: 39, callSize: 20, name: 12, parentPc: 16, parent: 0, callFuncID: 2}
	// Go 1.16 and 1.17: the header has no textStart; _func starts with
	// the entry's address (8 bytes) and has no flag; inlinedCall is Go
	// 1.18's.
	inl116 = inlFormat{funcnames: 24, pctab: 48, pcln: 56, ftabEntry: 16, fnName: 8,
		pcsp: 20, npcdata: 32, funcSize: 44, nfuncdata: 43, ptrFuncdata: true, callSize: 20, name: 12, parentPc: 16, parent: 0, callFuncID: 2}
)

// Inlines reads the inline trees of ef's .gopclntab.
func Inlines(ef *elfx.File) (Tree, error) {
	t, err := Open(ef)
	if err != nil {
		return nil, err
	}
	return t.Inlines(ef)
}

// format is the layout of the table's functab and _func; false for a
// table of another word size.
func (t *Table) format() (inlFormat, bool) {
	switch {
	case t.Data[7] != 8:
		return inlFormat{}, false
	case t.magic == magic120:
		return inl120, true
	case t.magic == magic118:
		return inl118, true
	case t.magic == magic116:
		return inl116, true
	}
	return inlFormat{}, false
}

// fnInl is where one function's inline tree is: its code, its pc-value
// table of tree indices, and the tree's address.
type fnInl struct {
	entry, end uint64
	pcdata     uint32
	inl        uint64
}

// Inlines reads the table's inline trees from ef, the file it came from.
// A table of another word size gives an empty tree and no error.
func (t *Table) Inlines(ef *elfx.File) (tree Tree, err error) {
	// debug/gosym gives the callers' lines.
	defer elfx.Catch(ef.Path, ".gopclntab", "inline tree", &tree, &err)
	tree = Tree{}
	err = t.eachTree(ef, func(tt *trees, f fnInl, raw []byte) error {
		if uint64(f.pcdata) > uint64(len(tt.pctab)) {
			return fmt.Errorf("%s: section .gopclntab: corrupt inline tree: pc-value table at %#x past the table's end", ef.Path, f.pcdata)
		}
		spans := pcSpans(tt.pctab[f.pcdata:], f.entry, f.end, uint64(t.Data[6]))
		if calls := t.inlCalls(tt, raw, f, spans); len(calls) > 0 {
			tree[f.entry] = calls
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// InlinedWrappers are the names of the wrappers the compiler made (see
// Wrappers) that the table's inline trees hold, read from ef, the file it
// came from, without the rest of the trees (Inlines).
func (t *Table) InlinedWrappers(ef *elfx.File) (names map[string]bool, err error) {
	defer elfx.Catch(ef.Path, ".gopclntab", "inline tree", &names, &err)
	names = map[string]bool{}
	err = t.eachTree(ef, func(tt *trees, f fnInl, raw []byte) error {
		ff := tt.ff
		for i := 0; (i+1)*ff.callSize <= len(raw); i++ {
			e := raw[i*ff.callSize:]
			nameOff := binary.LittleEndian.Uint32(e[ff.name:])
			parentPc := binary.LittleEndian.Uint32(e[ff.parentPc:])
			if int(nameOff) >= len(tt.funcnames) || uint64(parentPc) >= f.end-f.entry {
				break
			}
			if int(e[ff.callFuncID]) == tt.wrapper {
				names[cstring(tt.funcnames[nameOff:])] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// trees is what the readers of a table's inline trees share: its format,
// its function names and pc-value tables, and the wrappers' function ID
// (-1: unknown).
type trees struct {
	ff               inlFormat
	funcnames, pctab []byte
	wrapper          int
}

// eachTree calls fn with the bytes of each function's inline tree read
// from ef (up to the next funcdata, or its section's end). A table of
// another word size has none.
func (t *Table) eachTree(ef *elfx.File, fn func(tt *trees, f fnInl, raw []byte) error) error {
	ff, ok := t.format()
	if !ok {
		return nil
	}
	if !ff.ptrFuncdata && t.GoFunc == 0 {
		return fmt.Errorf("%s: no runtime module data points at .gopclntab: cannot read inline trees", ef.Path)
	}
	v := view{b: t.Data, bad: new(bool)} // at least a header's 64 bytes (Open)
	tt := &trees{ff: ff, funcnames: v.from(v.u64(uint64(ff.funcnames))), pctab: v.from(v.u64(uint64(ff.pctab)))}
	fns, ends := t.inlFuncs(ff, v)
	if *v.bad {
		return fmt.Errorf("%s: section .gopclntab: corrupt inline tree: an offset past the table's end", ef.Path)
	}
	m := &mem{ef: ef, rel: t.rel, secs: map[*elf.Section][]byte{}}
	tt.wrapper, _ = t.wrapperID(ff, v)
	for _, f := range fns {
		s := m.section(f.inl)
		if s == nil {
			continue
		}
		size := s.Addr + s.Size - f.inl
		if k := sort.Search(len(ends), func(i int) bool { return ends[i] > f.inl }); k < len(ends) {
			size = min(size, ends[k]-f.inl)
		}
		if err := fn(tt, f, m.read(f.inl, size)); err != nil {
			return err
		}
	}
	return nil
}

// inlFuncs lists the functions that have an inline tree, and the sorted
// addresses of every funcdata (each bounds the tree before it). A read
// past the table's end sets tab.bad and ends the list.
func (t *Table) inlFuncs(ff inlFormat, tab view) (fns []fnInl, funcdata []uint64) {
	pclnOff := tab.u64(uint64(ff.pcln))
	t.eachFunc(ff, tab, func(entry, end, funcoff uint64, f view) {
		npcdata := uint64(f.u32(uint64(ff.npcdata)))
		nfuncdata := int(f.u8(uint64(ff.nfuncdata)))
		// The funcdata follow the pcdata: offsets from go:func.*, or
		// addresses aligned to 8 in memory.
		fd := uint64(ff.funcSize) + 4*npcdata
		at := func(k int) (uint64, bool) {
			if !ff.ptrFuncdata {
				o := f.u32(fd + 4*uint64(k))
				return t.GoFunc + uint64(o), o != ^uint32(0)
			}
			p := fd
			if (t.Addr+pclnOff+funcoff+p)&4 != 0 {
				p += 4
			}
			a := f.u64(p + 8*uint64(k))
			return a, a != 0
		}
		for k := 0; k < nfuncdata; k++ {
			if a, ok := at(k); ok {
				funcdata = append(funcdata, a)
			}
		}
		if npcdata <= pcdataInlTreeIndex || nfuncdata <= funcdataInlTree {
			return
		}
		inl, ok := at(funcdataInlTree)
		pd := f.u32(uint64(ff.funcSize) + 4*pcdataInlTreeIndex)
		if !ok || pd == 0 || *tab.bad {
			return
		}
		fns = append(fns, fnInl{entry: entry, end: end, pcdata: pd, inl: inl})
	})
	sort.Slice(funcdata, func(i, j int) bool { return funcdata[i] < funcdata[j] })
	return fns, funcdata
}

// eachFunc calls fn with every function of the table's functab: its
// entry, its end (the next entry), the offset of its _func from the
// functab's start and a view of that _func. A read past the table's end
// sets tab.bad and ends the walk.
func (t *Table) eachFunc(ff inlFormat, tab view, fn func(entry, end, funcoff uint64, f view)) {
	nfunc := tab.u64(8)
	pcln := view{b: tab.from(tab.u64(uint64(ff.pcln))), bad: tab.bad}
	entrySize := uint64(ff.ftabEntry)
	word := func(off uint64) uint64 {
		if ff.ftabEntry == 16 {
			return pcln.u64(off)
		}
		return uint64(pcln.u32(off))
	}
	for i := uint64(0); i < nfunc && !*tab.bad; i++ {
		entry := t.Text + word(entrySize*i)
		end := t.Text + word(entrySize*(i+1))
		funcoff := word(entrySize*i + entrySize/2)
		fn(entry, end, funcoff, view{b: pcln.from(funcoff), bad: tab.bad})
	}
}

// view reads a table's little-endian words at offsets the table itself
// gives: a read past its end sets *bad (shared by the views of one table)
// and gives 0, so that a corrupt table ends in an error.
type view struct {
	b   []byte
	bad *bool
}

// from is the bytes from off on; none, and bad set, past the end.
func (v view) from(off uint64) []byte {
	if off > uint64(len(v.b)) {
		*v.bad = true
		return nil
	}
	return v.b[off:]
}

func (v view) bytes(off, n uint64) []byte {
	if off > uint64(len(v.b)) || n > uint64(len(v.b))-off {
		*v.bad = true
		return nil
	}
	return v.b[off : off+n]
}

func (v view) u64(off uint64) uint64 {
	if b := v.bytes(off, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (v view) u32(off uint64) uint32 {
	if b := v.bytes(off, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (v view) u8(off uint64) byte {
	if b := v.bytes(off, 1); b != nil {
		return b[0]
	}
	return 0
}

// inlCalls decodes one function's inline tree, raw, whose tree indices by
// address are spans.
func (t *Table) inlCalls(tt *trees, raw []byte, f fnInl, spans []span) []InlinedCall {
	ff, funcnames := tt.ff, tt.funcnames
	le := binary.LittleEndian
	indexAt := func(pc uint64) int {
		for _, s := range spans {
			if pc >= s.lo && pc < s.hi {
				return s.val
			}
		}
		return -1
	}
	var calls []InlinedCall
	var parents []int
	for i := 0; (i+1)*ff.callSize <= len(raw); i++ {
		e := raw[i*ff.callSize:]
		nameOff := le.Uint32(e[ff.name:])
		parentPc := le.Uint32(e[ff.parentPc:])
		if int(nameOff) >= len(funcnames) || uint64(parentPc) >= f.end-f.entry {
			break
		}
		c := InlinedCall{Index: i, Callee: cstring(funcnames[nameOff:]), PC: f.entry + uint64(parentPc),
			Wrapper: int(e[ff.callFuncID]) == tt.wrapper}
		if c.Callee == "" {
			break
		}
		c.File, c.Line, _ = t.Lines.PCToLine(c.PC)
		calls = append(calls, c)
		if ff.parent >= 0 {
			parents = append(parents, int(int16(le.Uint16(e[ff.parent:]))))
		}
	}
	for i := range calls {
		if ff.parent >= 0 {
			calls[i].Parent = parents[i]
		} else {
			calls[i].Parent = indexAt(calls[i].PC)
		}
		if calls[i].Parent >= i || calls[i].Parent >= len(calls) {
			calls[i].Parent = -1 // a parent precedes its children
		}
	}
	// Ranges: an address belongs to its innermost call and to every call
	// that holds that one.
	for _, s := range spans {
		for v, n := s.val, 0; v >= 0 && v < len(calls) && n < len(calls); v, n = calls[v].Parent, n+1 {
			r := &calls[v].Ranges
			if l := len(*r); l > 0 && (*r)[l-1][1] == s.lo {
				(*r)[l-1][1] = s.hi
			} else {
				*r = append(*r, [2]uint64{s.lo, s.hi})
			}
		}
	}
	return calls
}

type span struct {
	lo, hi uint64
	val    int
}

// pcSpans decodes a pc-value table (the runtime's step) into the spans
// of [entry, end) where the value is not -1.
func pcSpans(p []byte, entry, end uint64, quantum uint64) []span {
	var out []span
	for _, s := range pcValues(p, entry, end, quantum) {
		if s.val >= 0 {
			out = append(out, s)
		}
	}
	return out
}

// pcValues decodes a pc-value table into the spans of [entry, end) with
// their values, whatever they are.
func pcValues(p []byte, entry, end uint64, quantum uint64) []span {
	var out []span
	pc, val := entry, int32(-1)
	first := true
	for len(p) > 0 {
		uv, n := binary.Uvarint(p)
		if n <= 0 || uv == 0 && !first {
			break
		}
		first = false
		p = p[n:]
		u := uint32(uv)
		val += int32(-(u & 1) ^ (u >> 1))
		d, n := binary.Uvarint(p)
		if n <= 0 {
			break
		}
		p = p[n:]
		lo := pc
		pc += d * quantum
		if pc > lo {
			out = append(out, span{lo: lo, hi: min(pc, end), val: int(val)})
		}
		if pc >= end {
			break
		}
	}
	return out
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return ""
}

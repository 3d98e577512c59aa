package pcln

import (
	"debug/buildinfo"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
)

// InlinedCall is one entry of a function's inline tree in .gopclntab (the
// runtime's inlinedCall, Go 1.19 and later): a call the compiler inlined,
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
}

// Tree is the inline tree of every function that has one, by entry
// address.
type Tree map[uint64][]InlinedCall

const (
	pcdataInlTreeIndex = 2
	funcdataInlTree    = 3
	magic120           = 0xfffffff1 // Go 1.20 and later
)

// inlFormat is where a table's _func and inlinedCall keep what the
// inline reader needs (runtime/runtime2.go, runtime/symtab*.go).
type inlFormat struct {
	funcSize, nfuncdata int // _func's size, and its nfuncdata byte
	callSize            int // inlinedCall's size
	name, parentPc      int // inlinedCall's name offset and parentPc
	parent              int // its explicit parent (int16), or -1: from pcdata at parentPc
}

var (
	// Go 1.20 and later: _func gained startLine; inlinedCall is
	// {funcID, _ [3]byte, nameOff, parentPc, startLine}.
	inl120 = inlFormat{funcSize: 44, nfuncdata: 43, callSize: 16, name: 4, parentPc: 8, parent: -1}
	// Go 1.19: inlinedCall is {parent int16, funcID, _, file, line,
	// func_, parentPc}. (Go 1.18, same table magic, keeps funcdata as
	// pointers: not read.)
	inl119 = inlFormat{funcSize: 40, nfuncdata: 39, callSize: 20, name: 12, parentPc: 16, parent: 0}
)

// Inlines reads the inline trees of ef's .gopclntab. Binaries older than
// Go 1.19 give an empty tree and no error.
func Inlines(ef *elfx.File) (Tree, error) {
	t, err := Open(ef)
	if err != nil {
		return nil, err
	}
	return t.Inlines(ef)
}

// Inlines reads the table's inline trees from ef, the file it came from.
// Tables older than Go 1.19 give an empty tree and no error.
func (t *Table) Inlines(ef *elfx.File) (tree Tree, err error) {
	defer func() {
		if p := recover(); p != nil {
			tree, err = nil, fmt.Errorf("%s: section .gopclntab: corrupt inline tree: %v", ef.Path, p)
		}
	}()
	tab := t.Data
	le := binary.LittleEndian
	var ff inlFormat
	switch {
	case tab[7] != 8:
		return Tree{}, nil
	case t.magic == magic120:
		ff = inl120
	case t.magic == magic118 && t.GoFunc != 0 && isGo119(ef.Path):
		ff = inl119
	default:
		return Tree{}, nil
	}
	quantum := uint64(tab[6])
	nfunc := int(le.Uint64(tab[8:]))
	textStart := t.Text
	funcnames := tab[le.Uint64(tab[32:]):]
	pctab := tab[le.Uint64(tab[56:]):]
	pcln := tab[le.Uint64(tab[64:]):]
	gofunc := t.GoFunc
	if gofunc == 0 {
		return nil, fmt.Errorf("%s: no runtime module data points at .gopclntab: cannot read inline trees", ef.Path)
	}
	var funcdata []byte // go:func.* to the end of its section
	if s := section(ef, gofunc); s != nil {
		d, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: section %s: %v", ef.Path, s.Name, err)
		}
		funcdata = d[gofunc-s.Addr:]
	}
	lines := t.Lines

	type fnInl struct {
		entry, end uint64
		pcdata     uint32
		inl        uint32
	}
	var fns []fnInl
	var offs []uint32 // every funcdata offset: bounds of each tree
	for i := 0; i < nfunc; i++ {
		entry := textStart + uint64(le.Uint32(pcln[8*i:]))
		end := textStart + uint64(le.Uint32(pcln[8*(i+1):]))
		f := pcln[le.Uint32(pcln[8*i+4:]):]
		npcdata := le.Uint32(f[28:])
		nfuncdata := uint32(f[ff.nfuncdata])
		fd := f[uint32(ff.funcSize)+4*npcdata:]
		for k := uint32(0); k < nfuncdata; k++ {
			if o := le.Uint32(fd[4*k:]); o != ^uint32(0) {
				offs = append(offs, o)
			}
		}
		if npcdata <= pcdataInlTreeIndex || nfuncdata <= funcdataInlTree {
			continue
		}
		inl := le.Uint32(fd[4*funcdataInlTree:])
		pd := le.Uint32(f[ff.funcSize+4*pcdataInlTreeIndex:])
		if inl == ^uint32(0) || pd == 0 {
			continue
		}
		fns = append(fns, fnInl{entry: entry, end: end, pcdata: pd, inl: inl})
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })

	tree = Tree{}
	for _, f := range fns {
		// The tree's size: up to the next funcdata.
		k := sort.Search(len(offs), func(i int) bool { return offs[i] > f.inl })
		if uint64(f.inl) >= uint64(len(funcdata)) {
			continue
		}
		raw := funcdata[f.inl:]
		if k < len(offs) && int(offs[k]-f.inl) < len(raw) {
			raw = raw[:offs[k]-f.inl]
		}
		spans := pcSpans(pctab[f.pcdata:], f.entry, f.end, quantum)
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
			c := InlinedCall{Index: i, Callee: cstring(funcnames[nameOff:]), PC: f.entry + uint64(parentPc)}
			if c.Callee == "" {
				break
			}
			c.File, c.Line, _ = lines.PCToLine(c.PC)
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
		// Ranges: an address belongs to its innermost call and to every
		// call that holds that one.
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
		if len(calls) > 0 {
			tree[f.entry] = calls
		}
	}
	return tree, nil
}

type span struct {
	lo, hi uint64
	val    int
}

// pcSpans decodes a pc-value table (the runtime's step) into the spans
// of [entry, end) where the value is not -1.
func pcSpans(p []byte, entry, end uint64, quantum uint64) []span {
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
		if val >= 0 && pc > lo {
			out = append(out, span{lo: lo, hi: min(pc, end), val: int(val)})
		}
		if pc >= end {
			break
		}
	}
	return out
}

// isGo119 reports whether the Go binary at path says it was built by Go
// 1.19 (its build information).
func isGo119(path string) bool {
	bi, err := buildinfo.ReadFile(path)
	return err == nil && (bi.GoVersion == "go1.19" || strings.HasPrefix(bi.GoVersion, "go1.19."))
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return ""
}

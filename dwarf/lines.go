package dwarf

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// Lines returns the line table rows whose addresses fall in fn's ranges,
// in address order: the function's own lines and the lines of the bodies
// inlined into it. It returns types.ErrNotFound for a function with no
// out-of-line code.
func (f *File) Lines(fn *types.Func) (rows []types.Line, err error) {
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("%s: section .debug_line: corrupt DWARF: %v", f.Path, p)
		}
	}()
	if fn.LowPC == 0 || len(fn.Ranges) == 0 {
		return nil, fmt.Errorf("%s: %w: %s has no out-of-line code", f.Path, types.ErrNotFound, fn.Name)
	}
	cu, err := f.Data.Reader().SeekPC(fn.LowPC)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x: %v", f.Path, fn.LowPC, err)
	}
	all, err := f.unitRows(cu)
	if err != nil {
		return nil, err
	}
	for _, r := range fn.Ranges {
		i := sort.Search(len(all), func(i int) bool { return all[i].Addr >= r[0] })
		for ; i < len(all) && all[i].Addr < r[1]; i++ {
			rows = append(rows, all[i])
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Addr < rows[j].Addr })
	return rows, nil
}

// unitRows is a compile unit's line table in address order, read once.
func (f *File) unitRows(cu *dwarf.Entry) ([]types.Line, error) {
	if rows, ok := f.lineRows[cu.Offset]; ok {
		return rows, nil
	}
	lr, err := f.lineReader(cu)
	if err != nil {
		return nil, err
	}
	if lr == nil {
		return nil, fmt.Errorf("%s: section .debug_line: no line table for the unit at %#x", f.Path, cu.Offset)
	}
	var rows []types.Line
	var le dwarf.LineEntry
	for n := 0; ; n++ {
		if n > 1<<26 {
			return nil, fmt.Errorf("%s: section .debug_line: line program does not end", f.Path)
		}
		if err := lr.Next(&le); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: section .debug_line: %v", f.Path, err)
		}
		if le.EndSequence || le.File == nil {
			continue
		}
		rows = append(rows, types.Line{Addr: le.Address, File: le.File.Name, Line: le.Line, Column: le.Column,
			Stmt: le.IsStmt, PrologueEnd: le.PrologueEnd})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Addr < rows[j].Addr })
	if f.lineRows == nil {
		f.lineRows = map[dwarf.Offset][]types.Line{}
	}
	f.lineRows[cu.Offset] = rows
	return rows, nil
}

// PrologueEnd is the first address of fn after its prologue: the row the
// compiler marks as the prologue's end, else the second row of the line
// table in the function (as debuggers place breakpoints on unoptimised
// code), else the entry.
func (f *File) PrologueEnd(fn *types.Func) uint64 {
	rows, err := f.Lines(fn)
	if err != nil {
		return fn.LowPC
	}
	for _, r := range rows {
		if r.PrologueEnd {
			return r.Addr
		}
	}
	for _, r := range rows {
		if r.Addr > fn.LowPC && r.Stmt {
			return r.Addr
		}
	}
	return fn.LowPC
}

// VarsAt returns the parameters and variables in scope at pc, with where
// each lives there: those of the out-of-line function containing pc, of
// the lexical blocks containing pc, and of every function inlined at pc
// (innermost last). A variable whose location list does not cover pc has
// an empty Loc (optimised out there).
func (f *File) VarsAt(pc uint64) (vars []types.Var, err error) {
	defer func() {
		if p := recover(); p != nil {
			vars, err = nil, fmt.Errorf("%s: section .debug_info: corrupt DWARF: %v", f.Path, p)
		}
	}()
	r := f.Data.Reader()
	cu, err := r.SeekPC(pc)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x", f.Path, pc)
	}
	u := f.newUnitCtx(cu)
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	entryAt := func(off dwarf.Offset) *dwarf.Entry {
		rr := f.Data.Reader()
		rr.Seek(off)
		e, err := rr.Next()
		if err != nil {
			return nil
		}
		return e
	}
	// nameType follows abstract_origin for a name and a type.
	nameType := func(e *dwarf.Entry) (string, types.Type) {
		name := str(e, dwarf.AttrName)
		toff, _ := e.Val(dwarf.AttrType).(dwarf.Offset)
		for i := 0; i < 4 && (name == "" || toff == 0); i++ {
			o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				break
			}
			if e = entryAt(o); e == nil {
				break
			}
			if name == "" {
				name = str(e, dwarf.AttrName)
			}
			if toff == 0 {
				toff, _ = e.Val(dwarf.AttrType).(dwarf.Offset)
			}
		}
		var t types.Type = &types.Base{Name: "?"}
		if toff != 0 {
			if tt, err := c.root(toff); err == nil {
				t = tt
			}
		}
		return name, t
	}
	// inlinedName names an expansion's function as Functions does
	// (demangled, qualified), following abstract_origin to its linkage
	// name.
	lang := langOf(cu, str(cu, dwarf.AttrProducer))
	inlinedName := func(e *dwarf.Entry) string {
		fn := &types.Func{Lang: lang}
		for i := 0; i < 4 && e != nil; i++ {
			if fn.Name == "" {
				fn.Name = str(e, dwarf.AttrName)
			}
			if fn.Linkage == "" {
				fn.Linkage = str(e, dwarf.AttrLinkageName)
			}
			o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				o, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
			}
			if !ok {
				break
			}
			e = entryAt(o)
		}
		return displayName(fn)
	}
	covers := func(e *dwarf.Entry) bool {
		rs, err := f.Data.Ranges(e)
		if err != nil {
			return false
		}
		for _, rg := range rs {
			if pc >= rg[0] && pc < rg[1] {
				return true
			}
		}
		return false
	}
	var frameBase []byte
	entry := false // pc is the function's first instruction
	inline := ""
	var inlines []string // inline at each entered depth
	depth := 0
	for n := 0; ; n++ {
		if n > 1<<24 || depth > maxNesting {
			return nil, fmt.Errorf("%s: section .debug_info: DIE tree too deep or endless", f.Path)
		}
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: section .debug_info: %v", f.Path, err)
		}
		if e == nil || e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth < 0 {
				break
			}
			inline, inlines = inlines[len(inlines)-1], inlines[:len(inlines)-1]
			continue
		}
		outer := inline
		enter := false
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagLexDwarfBlock, dwarf.TagInlinedSubroutine:
			enter = covers(e)
			if !enter && e.Tag == dwarf.TagInlinedSubroutine {
				// An expansion's entry may lie outside its ranges (GCC
				// gives some an empty first range).
				enter = f.entryPCOf(e) == pc
			}
			if enter && e.Tag == dwarf.TagSubprogram {
				if fb, ok := readLocAttr(e, dwarf.AttrFrameBase); ok && !fb.list {
					frameBase = fb.expr
				}
				if rs, err := f.Data.Ranges(e); err == nil && len(rs) > 0 {
					entry = lowest(rs) == pc
				}
			}
			if enter && e.Tag == dwarf.TagInlinedSubroutine {
				inline = inlinedName(e)
			}
		case dwarf.TagNamespace, dwarf.TagModule:
			enter = true
		case dwarf.TagFormalParameter, dwarf.TagVariable:
			if depth == 0 { // a global at unit level
				break
			}
			name, t := nameType(e)
			v := types.Var{Name: name, Type: t, Param: e.Tag == dwarf.TagFormalParameter, Inline: inline}
			if la, ok := readLocAttr(e, dwarf.AttrLocation); ok {
				if expr, ok := f.locAt(u, la, pc); ok {
					v.Loc = f.decodeLoc(u, expr, frameBase)
				}
			} else if cv := e.Val(dwarf.AttrConstValue); cv != nil {
				if x, ok := cv.(int64); ok {
					v.Loc = types.Loc{Pieces: []types.Piece{{Kind: types.LocConst, Offset: x}}}
				}
			}
			vars = append(vars, v)
		}
		switch {
		case e.Children && enter:
			depth++
			inlines = append(inlines, outer)
		case e.Children:
			r.SkipChildren()
			inline = outer
		default:
			inline = outer
		}
	}
	if entry {
		a, _ := arch.ForMachine(f.ELF.Machine)
		for i := range vars {
			vars[i].Loc = atEntry(vars[i].Loc, a)
		}
	}
	return vars, nil
}

// entryPC is an inlined_subroutine's DW_AT_entry_pc (an address, or a
// DWARF 5 offset from its lowest address), or 0.
func (f *File) entryPCOf(e *dwarf.Entry) uint64 {
	switch v := e.Val(dwarf.AttrEntrypc).(type) {
	case uint64:
		return v
	case int64:
		if rs, err := f.Data.Ranges(e); err == nil && len(rs) > 0 {
			return rs[0][0] + uint64(v)
		}
	}
	return 0
}

// LineAddrs returns the statement addresses where code for file:line
// begins, in every compile unit: file is the path as the line tables name
// it, or a suffix of it after a '/'. Rows are in address order.
func (f *File) LineAddrs(file string, line int) (addrs []uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			addrs, err = nil, fmt.Errorf("%s: section .debug_line: corrupt DWARF: %v", f.Path, p)
		}
	}()
	err = f.eachUnit(func(e *dwarf.Entry) {
		rows, err := f.unitRows(e)
		if err != nil {
			return // a unit without a line table
		}
		for i, row := range rows {
			if row.Line != line || !row.Stmt || (row.File != file && !strings.HasSuffix(row.File, "/"+file)) {
				continue
			}
			// The first row of a run of rows of this line.
			if i > 0 && rows[i-1].Line == line && rows[i-1].File == row.File {
				continue
			}
			addrs = append(addrs, row.Addr)
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	return addrs, nil
}

// eachUnit calls fn with the entry of every compile unit, skipping their
// children.
func (f *File) eachUnit(fn func(cu *dwarf.Entry)) error {
	r := f.entries()
	for {
		e, err := r.next()
		if err != nil || e == nil {
			return err
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			continue
		}
		if e.Children {
			r.r.SkipChildren()
		}
		fn(e)
	}
}

// LineAt is the line table's row for the code at addr: the last row at the
// greatest address not above addr in the compile unit holding addr, as
// addr2line reads it; ok is false when no unit's table covers addr.
func (f *File) LineAt(addr uint64) (row types.Line, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			row, ok = types.Line{}, false
		}
	}()
	cu, err := f.unitAt(addr)
	if err != nil || cu == nil {
		return types.Line{}, false
	}
	rows, err := f.unitRows(cu)
	if err != nil {
		return types.Line{}, false
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > addr }) - 1
	if i < 0 {
		return types.Line{}, false
	}
	return rows[i], true
}

// unitAt is the compile unit whose ranges hold addr, found through a
// sorted table of every unit's ranges built once.
func (f *File) unitAt(addr uint64) (*dwarf.Entry, error) {
	f.unitOnce.Do(func() {
		r := f.Data.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
				if rs, err := f.Data.Ranges(e); err == nil {
					for _, rg := range rs {
						if rg[1] > rg[0] {
							f.unitRanges = append(f.unitRanges, unitRange{rg[0], rg[1], e})
						}
					}
				}
			}
			r.SkipChildren()
		}
		sort.Slice(f.unitRanges, func(i, j int) bool { return f.unitRanges[i].lo < f.unitRanges[j].lo })
	})
	i := sort.Search(len(f.unitRanges), func(i int) bool { return f.unitRanges[i].lo > addr }) - 1
	for k := i; k >= 0 && k > i-8; k-- {
		if u := f.unitRanges[k]; addr >= u.lo && addr < u.hi {
			return u.cu, nil
		}
	}
	return f.Data.Reader().SeekPC(addr)
}

type unitRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

package dwarf

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Lines returns the line table rows whose addresses fall in fn's ranges,
// in address order: the function's own lines and the lines of the bodies
// inlined into it. It returns types.ErrNotFound for a function with no
// out-of-line code.
func (f *File) Lines(fn *types.Func) (rows []types.Line, err error) {
	if fn.LowPC == 0 || len(fn.Ranges) == 0 {
		return nil, fmt.Errorf("%s: %w: %s has no out-of-line code", f.Path, types.ErrNotFound, fn.Name)
	}
	cu, err := f.unitAt(fn.LowPC)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x: %v", f.Path, fn.LowPC, err)
	}
	t, err := f.unitTable(cu)
	if err != nil {
		return nil, err
	}
	all := t.Entries
	for _, r := range fn.Ranges {
		i := sort.Search(len(all), func(i int) bool { return all[i].Addr >= r[0] })
		for ; i < len(all) && all[i].Addr < r[1]; i++ {
			rows = append(rows, rowOf(t, &all[i]))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Addr < rows[j].Addr })
	return rows, nil
}

// noFile is line.NoFile, for functions whose parameter line hides the package.
const noFile = line.NoFile

// unitRows is a compile unit's line table in address order.
func (f *File) unitRows(cu *Entry) ([]types.Line, error) {
	t, err := f.unitTable(cu)
	if err != nil {
		return nil, err
	}
	rows := make([]types.Line, len(t.Entries))
	for i := range t.Entries {
		rows[i] = rowOf(t, &t.Entries[i])
	}
	return rows, nil
}

// rowOf is the model's row of entry e of t.
func rowOf(t *line.Table, e *line.Entry) types.Line {
	return types.Line{Addr: e.Addr, File: t.File(e), Line: int(e.Line), Column: int(e.Column),
		Stmt: e.Stmt, PrologueEnd: e.PrologueEnd}
}

// unitTable is a compile unit's line table, read once.
func (f *File) unitTable(cu *Entry) (*line.Table, error) {
	f.cacheMu.Lock()
	t, ok := f.lineTables[cu.Offset]
	f.cacheMu.Unlock()
	if ok {
		return t, nil
	}
	// Decoded unlocked: two cores that want one unit at once both decode it.
	p, err := f.lineProgram(cu)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("%s: section .debug_line: no line table for the unit at %#x", f.Path, cu.Offset)
	}
	if t, err = p.Table(); err != nil {
		return nil, f.lineError(err)
	}
	f.cacheMu.Lock()
	defer f.cacheMu.Unlock()
	if f.lineTables == nil {
		f.lineTables = map[Offset]*line.Table{}
	}
	f.lineTables[cu.Offset] = t
	return t, nil
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

// LineAddrs returns the statement addresses where code for file:line
// begins, in every compile unit: file is the path as the line tables name
// it, or a suffix of it after a '/'. Rows are in address order.
func (f *File) LineAddrs(file string, line int) (addrs []uint64, err error) {
	err = f.eachUnit(func(e *Entry) {
		t, err := f.unitTable(e)
		if err != nil {
			return // a unit without a line table
		}
		named := make([]bool, len(t.Files))
		for i, name := range t.Files {
			named[i] = name == file || strings.HasSuffix(name, "/"+file)
		}
		rows := t.Entries
		for i := range rows {
			row := &rows[i]
			if int(row.Line) != line || !row.Stmt || row.File == noFile || !named[row.File] {
				continue
			}
			// The first row of a run of rows of this line.
			if i > 0 && int(rows[i-1].Line) == line && t.File(&rows[i-1]) == t.Files[row.File] {
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

// eachUnit calls fn with the entry of every compile unit, over a scan
// of the units' headers that decodes only their unit DIEs.
func (f *File) eachUnit(fn func(cu *Entry)) error {
	de := f.dieEntries(typeWalk)
	for {
		e, err := de.next(false)
		if err != nil {
			return f.scanError(de.sc, err)
		}
		if e == nil {
			return nil
		}
		unit := e.Tag == TagCompileUnit || e.Tag == TagPartialUnit
		de.skipUnit()
		if unit {
			fn(e)
		}
	}
}

// LineAt is the line table's row for the code at addr: the last row at the
// greatest address not above addr in the compile unit holding addr, as
// addr2line reads it; ok is false when no unit's table covers addr.
func (f *File) LineAt(addr uint64) (row types.Line, ok bool) {
	cu, err := f.unitAt(addr)
	if err != nil || cu == nil {
		return types.Line{}, false
	}
	t, err := f.unitTable(cu)
	if err != nil {
		return types.Line{}, false
	}
	i := t.At(addr)
	if i < 0 {
		return types.Line{}, false
	}
	return rowOf(t, &t.Entries[i]), true
}

// unitAt is the compile unit whose ranges hold addr, found through a
// sorted table of every unit's ranges built once.
func (f *File) unitAt(addr uint64) (*Entry, error) {
	if cu, ok := f.rangedUnit(addr); ok {
		return cu, nil
	}
	return f.dieReader().SeekPC(addr)
}

// rangedUnit is the compile unit whose DW_AT_low_pc/high_pc or DW_AT_ranges
// hold addr, false when none does.
func (f *File) rangedUnit(addr uint64) (*Entry, bool) {
	f.unitOnce.Do(func() {
		// A corrupt unit ends the table: the units before it are kept.
		_ = f.eachUnit(func(e *Entry) {
			if rs, err := f.ranges(e); err == nil {
				for _, rg := range rs {
					if rg[1] > rg[0] {
						f.unitRanges = append(f.unitRanges, unitRange{rg[0], rg[1], e})
					}
				}
			}
		})
		sort.Slice(f.unitRanges, func(i, j int) bool { return f.unitRanges[i].lo < f.unitRanges[j].lo })
	})
	i := sort.Search(len(f.unitRanges), func(i int) bool { return f.unitRanges[i].lo > addr }) - 1
	for k := i; k >= 0 && k > i-8; k-- {
		if u := f.unitRanges[k]; addr >= u.lo && addr < u.hi {
			return u.cu, true
		}
	}
	return nil, false
}

type unitRange struct {
	lo, hi uint64
	cu     *Entry
}

// lineProgram is the header of cu's line program, nil when cu has none.
func (f *File) lineProgram(cu *Entry) (*line.Program, error) {
	off, ok := cu.Int(AttrStmtList)
	if !ok {
		return nil, nil
	}
	s := &line.Sections{Line: f.section(".debug_line"), Str: f.section(".debug_str"),
		LineStr: f.section(".debug_line_str"), Order: f.order()}
	if s.Line == nil {
		return nil, nil
	}
	u := &line.Unit{AddrSize: f.unitAddrSize(cu.Offset)}
	u.CompDir, _ = cu.Str(AttrCompDir)
	if base, ok := cu.Int(AttrStrOffsetsBase); ok {
		u.StrOffsetsBase, s.StrOffsets = base, f.section(".debug_str_offsets")
	}
	p, err := line.New(s, off, u)
	if err != nil {
		return nil, f.lineError(err)
	}
	return p, nil
}

// lineError is err, met in a line program, as a *elfx.DecodeError
// naming the section and the offset.
func (f *File) lineError(err error) error {
	var de *line.DecodeError
	if errors.As(err, &de) {
		return elfx.Decode(f.Path, de.Section, uint64(de.Offset), errors.New(de.Err))
	}
	return elfx.Decode(f.Path, ".debug_line", elfx.NoOffset, err)
}

// unitFiles is the file table of a compile unit's line program, read once
// per unit: DW_AT_decl_file and DW_AT_call_file index it.
func (f *File) unitFiles(cu *Entry) []string {
	f.cacheMu.Lock()
	files, ok := f.lineFiles[cu.Offset]
	f.cacheMu.Unlock()
	if ok {
		return files
	}
	// Read without the lock: walks on other cores read other units.
	if p, err := f.lineProgram(cu); err == nil && p != nil {
		files = make([]string, len(p.Files))
		for i, lf := range p.Files {
			if lf != nil {
				files[i] = lf.Name
			}
		}
	}
	f.cacheMu.Lock()
	defer f.cacheMu.Unlock()
	if f.lineFiles == nil {
		f.lineFiles = map[Offset][]string{}
	}
	f.lineFiles[cu.Offset] = files
	return files
}

// fileName resolves a file attribute (DW_AT_decl_file, DW_AT_call_file)
// through a unit's file table; "" when it is absent or out of range.
func fileName(files []string, v any) string {
	i, ok := v.(int64)
	if !ok {
		return ""
	}
	return fileAt(files, i)
}

// fileAt is entry i of a unit's file table, "" for none.
func fileAt(files []string, i int64) string {
	if i < 0 || i >= int64(len(files)) {
		return ""
	}
	return files[i]
}

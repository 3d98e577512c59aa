package dwarf

import (
	"debug/dwarf"
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
	defer f.guard(&err)
	if fn.LowPC == 0 || len(fn.Ranges) == 0 {
		return nil, fmt.Errorf("%s: %w: %s has no out-of-line code", f.Path, types.ErrNotFound, fn.Name)
	}
	cu, err := f.unitAt(fn.LowPC)
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
	f.cacheMu.Lock()
	t, ok := f.lineTables[cu.Offset]
	f.cacheMu.Unlock()
	if ok {
		return t.Rows, nil
	}
	// Decoded unlocked: two cores that want one unit at once both decode it.
	lr, err := f.lineReader(cu)
	if err != nil {
		return nil, err
	}
	if lr == nil {
		return nil, fmt.Errorf("%s: section .debug_line: no line table for the unit at %#x", f.Path, cu.Offset)
	}
	if t, err = line.Read(lr); err != nil {
		return nil, f.lineError(cu, err)
	}
	f.cacheMu.Lock()
	defer f.cacheMu.Unlock()
	if f.lineTables == nil {
		f.lineTables = map[dwarf.Offset]*line.Table{}
	}
	f.lineTables[cu.Offset] = t
	return t.Rows, nil
}

// inSequence reports whether some sequence of the unit's line table
// covers addr: code between sequences has no row.
func (f *File) inSequence(cu dwarf.Offset, addr uint64) bool {
	f.cacheMu.Lock()
	t := f.lineTables[cu]
	f.cacheMu.Unlock()
	return t != nil && t.InSequence(addr)
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

// eachUnit calls fn with the entry of every compile unit, over a scan
// of the units' headers that decodes only their unit DIEs.
func (f *File) eachUnit(fn func(cu *dwarf.Entry)) error {
	de := f.dieEntries(typeWalk)
	for {
		e, err := de.next(false)
		if err != nil {
			return f.scanError(de.sc, err)
		}
		if e == nil {
			return nil
		}
		unit := e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit
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
	rows, err := f.unitRows(cu)
	if err != nil {
		return types.Line{}, false
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Addr > addr }) - 1
	if i < 0 || !f.inSequence(cu.Offset, addr) {
		return types.Line{}, false
	}
	return rows[i], true
}

// unitAt is the compile unit whose ranges hold addr, found through a
// sorted table of every unit's ranges built once.
func (f *File) unitAt(addr uint64) (*dwarf.Entry, error) {
	f.unitOnce.Do(func() {
		// A corrupt unit ends the table: the units before it are kept.
		_ = f.eachUnit(func(e *dwarf.Entry) {
			if rs, err := f.Data.Ranges(e); err == nil {
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
			return u.cu, nil
		}
	}
	return f.Data.Reader().SeekPC(addr)
}

type unitRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

// lineReader is debug/dwarf's LineReader for cu, after a check of the line
// program's header: debug/dwarf reads as many directory and file entries
// as a DWARF 5 header claims, even when the header's bytes run out or its
// entries have no fields, so a corrupt count of 2^32 cost minutes and
// gigabytes. A header whose counts its bytes cannot hold is an error naming
// the section and the offset.
func (f *File) lineReader(cu *dwarf.Entry) (*dwarf.LineReader, error) {
	if off, ok := cu.Val(dwarf.AttrStmtList).(int64); ok {
		b, err := f.Debug.DebugLine()
		if err != nil {
			return nil, err
		}
		if err := line.CheckHeader(b, off, f.Debug.ByteOrder); err != nil {
			return nil, elfx.Decode(f.Path, ".debug_line", uint64(off), err)
		}
	}
	lr, err := f.Data.LineReader(cu)
	if err != nil {
		return nil, f.lineError(cu, err)
	}
	return lr, nil
}

// lineError is err, met in the line program of unit cu, as a
// *elfx.DecodeError at the program's offset in .debug_line.
func (f *File) lineError(cu *dwarf.Entry, err error) error {
	off, _ := cu.Val(dwarf.AttrStmtList).(int64)
	return elfx.Decode(f.Path, ".debug_line", uint64(off), err)
}

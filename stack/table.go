// Package stack holds what user space does with stacks: the unwind tables
// the BPF unwinder (package unwind) reads, in its row format (Tables,
// Rows: compiled from each file's call frame information by
// internal/cfi), the mappings of a process they are keyed by
// (ProcMappings), and the names of the addresses a stack holds
// (Symbolizer: functions with their inline expansions, from the model of
// code) as the Frames of a Stack, which package flame prints.
package stack

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/unwind"
)

// Rows compiles CFI rows for the BPF unwinder (amd64): rules it
// cannot follow (CFA expressions other than the PLT's, registers other
// than SP and FP) become frame-pointer rows, which are right wherever the
// code keeps frame pointers. The result starts with a frame-pointer row at
// address 0, for addresses before the first FDE.
func Rows(rows []cfi.Row, a *arch.Arch) []unwind.Row {
	fp, _ := a.RegNumber(a.FP)
	out := []unwind.Row{unwind.FPRow}
	for _, r := range rows {
		u := unwind.FPRow
		u.PC = r.PC
		switch {
		case !r.Covered:
		case r.RA.Kind == cfi.Undefined:
			u.Flags = unwind.FlagStop
		case r.CFA.Expr && !r.CFA.PLT, r.RA.Kind != cfi.Offset || r.RA.Offset != -8,
			int(r.CFA.Reg) != a.SPReg && int(r.CFA.Reg) != fp,
			r.CFA.Offset != int64(int32(r.CFA.Offset)):
			// Not a rule the unwinder follows: trust the frame pointer.
		default:
			u = unwind.Row{PC: r.PC, CFAOff: int32(r.CFA.Offset)}
			if int(r.CFA.Reg) == a.SPReg {
				u.Flags |= unwind.FlagCFASP
			}
			if r.CFA.PLT {
				u.Flags |= unwind.FlagPLT
			}
			if r.FP.Kind == cfi.Offset && r.FP.Offset == int64(int16(r.FP.Offset)) {
				u.Flags |= unwind.FlagFPSaved
				u.FPOff = int16(r.FP.Offset)
			}
		}
		if last := &out[len(out)-1]; last.PC == u.PC {
			*last = u
			continue
		} else if last.CFAOff == u.CFAOff && last.FPOff == u.FPOff && last.Flags == u.Flags {
			continue
		}
		out = append(out, u)
	}
	return out
}

// Tables holds the unwind rows of the files a session's processes map,
// each file's once, in the layout of the "unwind_rows" array.
type Tables struct {
	Rows  []unwind.Row
	files map[string][2]uint32 // path: first row, end row
	a     *arch.Arch
	// Failed lists the files whose CFI could not be read (they unwind by
	// frame pointer), with why.
	Failed map[string]string
}

// NewTables starts tables with the frame-pointer row at index 0, which
// addresses outside every module use.
func NewTables(a *arch.Arch) *Tables {
	return &Tables{Rows: []unwind.Row{unwind.FPRow}, files: map[string][2]uint32{}, a: a, Failed: map[string]string{}}
}

// Arch is the machine the tables are for.
func (t *Tables) Arch() *arch.Arch { return t.a }

// Add compiles path's CFI, once, and returns its rows' range.
func (t *Tables) Add(path string) (lo, hi uint32) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if r, ok := t.files[path]; ok {
		return r[0], r[1]
	}
	rows, err := fileRows(path, t.a)
	if err != nil {
		t.Failed[path] = err.Error()
		t.files[path] = [2]uint32{0, 0}
		return 0, 0
	}
	lo = uint32(len(t.Rows))
	t.Rows = append(t.Rows, rows...)
	hi = uint32(len(t.Rows))
	t.files[path] = [2]uint32{lo, hi}
	return lo, hi
}

func fileRows(path string, a *arch.Arch) ([]unwind.Row, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	rows, err := cfi.Table(ef)
	if err != nil {
		return nil, err
	}
	// Go code that no call frame information describes (-s -w) unwinds
	// by the runtime's own tables.
	rows = cfi.Fill(rows, goRows(ef, a))
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no .eh_frame, .debug_frame or Go function table", path)
	}
	return Rows(rows, a), nil
}

// ProcValue is a process's "unwind_procs" value for its mappings: the
// first unwind.MaxModules files with tables.
func (t *Tables) ProcValue(ms []Mapping) []byte {
	b := make([]byte, unwind.ProcValueSize)
	n := 0
	for _, m := range ms {
		if n == unwind.MaxModules {
			break
		}
		lo, hi := t.Add(m.Readable())
		if hi == lo {
			continue
		}
		o := n * unwind.ModuleSize
		binary.LittleEndian.PutUint64(b[o:], m.Start)
		binary.LittleEndian.PutUint64(b[o+8:], m.End)
		binary.LittleEndian.PutUint64(b[o+16:], m.Bias)
		binary.LittleEndian.PutUint64(b[o+24:], uint64(lo)|uint64(hi)<<32)
		n++
	}
	return b
}

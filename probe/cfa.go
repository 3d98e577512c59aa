package probe

import (
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/cfi"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// frameTable is the file's call frame information, read the first time a
// site needs it: the rows that say how the canonical frame address (CFA)
// is computed at each address, and the whole of it, which says where a
// register is saved.
type frameTable struct {
	ef    *elfx.File
	arch  *arch.Arch
	rows  []cfi.Row // nil until read (see row)
	read  bool
	whole *cfi.Frames // nil until read (see saved)
}

// row is the call frame row covering pc. The rows are read the first
// time a variable lives in a frame slot; a file without them leaves frame
// slots unreadable.
func (fr *frameTable) row(pc uint64) (cfi.Row, bool) {
	if !fr.read {
		fr.read = true
		fr.rows, _ = cfi.Table(fr.ef)
	}
	return cfi.Lookup(fr.rows, pc)
}

// cfa is how the canonical frame address is computed at pc: a register
// plus an offset, from the call frame information.
func (fr *frameTable) cfa(pc uint64) (string, int64, bool) {
	row, ok := fr.row(pc)
	if !ok || row.CFA.Expr || row.CFA.PLT {
		return "", 0, false
	}
	reg := fr.arch.RegName(int(row.CFA.Reg))
	if reg.Vector {
		return "", 0, false
	}
	return reg.Name, row.CFA.Offset, true
}

// saved is where, at pc, the call frame information says the caller's
// value of register name is saved: at CFA + the offset returned.
func (fr *frameTable) saved(pc uint64, name string) (int64, bool) {
	n, ok := fr.arch.RegNumber(name)
	if !ok {
		return 0, false
	}
	if fr.whole == nil {
		whole, err := cfi.ReadFrames(fr.ef)
		if err != nil {
			whole = &cfi.Frames{}
		}
		fr.whole = whole
	}
	rule, ok := fr.whole.Saved(pc, n)
	return rule.Offset, ok && rule.Kind == cfi.Offset
}

// inFrame rewrites the pieces of vars that DWARF places relative to the
// canonical frame address (DW_OP_fbreg under a DW_OP_call_frame_cfa frame
// base, as GCC, clang and Go describe frame slots) as memory relative to
// the register the call frame information computes the CFA from at pc:
// [CFA-24] becomes [RSP-8] after a push and a 16-byte frame. Where no row
// covers pc, or the CFA is an expression, they stay as they are, and the
// fetch says they cannot be read. vars is not modified.
func (fr *frameTable) inFrame(pc uint64, vars []types.Var) []types.Var {
	var (
		reg           string
		off           int64
		looked, found bool
		out           []types.Var
	)
	for i, v := range vars {
		var ps []types.Piece
		for j, p := range v.Loc.Pieces {
			if p.Kind != types.LocCFA {
				continue
			}
			if !looked {
				looked = true
				reg, off, found = fr.cfa(pc)
			}
			if !found {
				break
			}
			if ps == nil {
				ps = append([]types.Piece(nil), v.Loc.Pieces...)
			}
			ps[j] = types.Piece{Kind: types.LocMem, Reg: reg, Offset: off + p.Offset, Size: p.Size}
		}
		if ps == nil {
			continue
		}
		if out == nil {
			out = append([]types.Var(nil), vars...)
		}
		out[i].Loc.Pieces = ps
	}
	if out == nil {
		return vars
	}
	return out
}

// mark is a mark with the rule of the CFA at pc.
func (fr *frameTable) mark(pc uint64) *spec.Mark {
	m := &spec.Mark{}
	if reg, off, ok := fr.cfa(pc); ok {
		m.CFAReg, m.CFAOff = reg, off
	}
	return m
}

package goref

import (
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/types"
)

// EntryLocs is where each argument of a Go function (receiver first, in
// declaration order; results are skipped and get an empty Loc) is at its
// first instruction under the register ABI (cmd/compile/abi-internal.md):
// each scalar part of an argument takes the next integer register (RAX,
// RBX, RCX, RDI, RSI, R8-R11 on amd64) or floating-point register (X0 to
// X14); an argument whose parts do not all fit, or that holds an array of
// more than one element, goes to the stack instead and gives back the
// registers it took. Stack arguments are laid out in order, each aligned
// to its type, from the caller's stack pointer: at the entry they start
// just above the return address ([RSP+8] on amd64).
//
// Worked example: func (c *counter) Add(v float64) has c in RAX and v in
// X0; func f(s string, a [2]int, n int) has s in RAX:8 RBX:8, a at
// [RSP+8] (16 bytes) and n in RCX.
//
// A value in one register has one piece of Size 0, as Go's DWARF writes
// it; a value in several registers has a piece per register with its
// size.
//
// Without regABI (a binary of Go before the register ABI, see
// arch.GoRegABI) every argument is on the stack, where
// types.GoStackOffsets says, from [RSP+8]; on other architectures than
// x86-64 such arguments get no location.
func EntryLocs(params []types.Param, a *arch.Arch, regABI bool) []types.Loc {
	out := make([]types.Loc, len(params))
	if !regABI {
		offs, ok := types.GoStackOffsets(params, 8)
		for k, p := range params {
			if ok && !p.Result && a.Name == "x86_64" {
				out[k] = types.Loc{Pieces: []types.Piece{{Kind: types.LocMem, Reg: a.SP, Offset: offs[k] + a.EntryCFA}}}
			}
		}
		return out
	}
	ints, floats := 0, 0
	var stack int64
	for k, p := range params {
		if p.Result {
			continue
		}
		var pieces []types.Piece
		i, f := ints, floats
		ok := types.ScalarParts(p.Type, func(size int64, float bool) bool {
			if float {
				if f >= len(a.GoFloatRegs) {
					return false
				}
				pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: a.GoFloatRegs[f], Size: size, Vector: true})
				f++
				return true
			}
			if i >= len(a.GoIntRegs) {
				return false
			}
			pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: a.GoIntRegs[i], Size: size})
			i++
			return true
		})
		if ok {
			ints, floats = i, f
			if len(pieces) == 1 {
				pieces[0].Size = 0
			}
			out[k] = types.Loc{Pieces: pieces}
			continue
		}
		size, err := types.Sizeof(p.Type)
		if err != nil {
			continue
		}
		align := types.Alignof(p.Type)
		if align > 0 {
			stack = (stack + align - 1) / align * align
		}
		if size > 0 {
			out[k] = types.Loc{Pieces: []types.Piece{{Kind: types.LocMem, Reg: a.SP, Offset: stack + a.EntryCFA}}}
		}
		stack += size
	}
	return out
}

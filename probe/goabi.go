package probe

import (
	"fmt"

	"github.com/binscope/binscope/types"
)

// goResults is where Go's register ABI puts the first result in rs at a
// RET (cmd/compile/abi-internal.md): each scalar part of each result, in
// order, takes the next integer register (RAX, RBX, RCX, RDI, RSI, R8-R11
// on amd64) or floating-point register (X0-X14); a result whose parts do
// not all fit goes to the stack. Results are assigned from the first
// register again, independently of the arguments.
//
// Worked example: func f() (n int, s string, ok bool) returns n in RAX, s
// in RBX (pointer) and RCX (length), ok in RDI.
func goResults(rs []types.Param, r *Resolver) (types.Loc, types.Type, string) {
	locs, err := goAssign(rs, r)
	if err != "" {
		return types.Loc{}, nil, err
	}
	return locs[0], rs[0].Type, ""
}

// goAssign assigns every result; a result on the stack has an empty Loc.
func goAssign(rs []types.Param, r *Resolver) ([]types.Loc, string) {
	ints, floats := 0, 0
	var out []types.Loc
	for _, p := range rs {
		var pieces []types.Piece
		i, f := ints, floats
		ok := types.ScalarParts(p.Type, func(size int64, float bool) bool {
			if float {
				if f >= len(r.arch.GoFloatRegs) {
					return false
				}
				pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: r.arch.GoFloatRegs[f], Size: size, Vector: true})
				f++
				return true
			}
			if i >= len(r.arch.GoIntRegs) {
				return false
			}
			pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: r.arch.GoIntRegs[i], Size: size})
			i++
			return true
		})
		if !ok {
			out = append(out, types.Loc{})
			continue
		}
		ints, floats = i, f
		out = append(out, types.Loc{Pieces: pieces})
	}
	if len(out) == 0 || len(out[0].Pieces) == 0 && len(rs) > 0 {
		if len(rs) > 0 {
			return nil, fmt.Sprintf("the result %s is returned on the stack", goName(rs[0].Name))
		}
	}
	return out, ""
}

func goName(n string) string {
	if n == "" || n[0] == '~' {
		return "(unnamed)"
	}
	return n
}

// goResult is where result i of the Go function fn is at a RET.
func (r *Resolver) goResult(fn *types.Func, i int) (types.Loc, types.Type, string) {
	var rs []types.Param
	for _, p := range fn.Params {
		if p.Result {
			rs = append(rs, p)
		}
	}
	locs, why := goAssign(rs, r)
	if why != "" && i == 0 || i >= len(locs) {
		return types.Loc{}, nil, "result not found"
	}
	if len(locs[i].Pieces) == 0 {
		return types.Loc{}, nil, fmt.Sprintf("the result %s is returned on the stack", goName(rs[i].Name))
	}
	return locs[i], rs[i].Type, ""
}

package probe

import (
	"debug/buildinfo"
	"fmt"

	"github.com/binscope/binscope/types"
)

// goResults is where Go's register ABI puts the first result in rs of fn at a
// RET (cmd/compile/abi-internal.md): each scalar part of each result, in
// order, takes the next integer register (RAX, RBX, RCX, RDI, RSI, R8-R11
// on amd64) or floating-point register (X0-X14); a result whose parts do
// not all fit goes to the stack. Results are assigned from the first
// register again, independently of the arguments.
//
// Worked example: func f() (n int, s string, ok bool) returns n in RAX, s
// in RBX (pointer) and RCX (length), ok in RDI.
func goResults(fn *types.Func, rs []types.Param, t *target) (types.Loc, types.Type, string) {
	locs, err := goAssign(fn, rs, t)
	if err != "" {
		return types.Loc{}, nil, err
	}
	return locs[0], rs[0].Type, ""
}

// goAssign assigns every result rs of fn; a result on the stack has an
// empty Loc. In a binary of Go before the register ABI, results are all on
// the stack, where goStackResults says.
func goAssign(fn *types.Func, rs []types.Param, t *target) ([]types.Loc, string) {
	if !t.goRegABI() {
		return t.goStackResults(fn)
	}
	ints, floats := 0, 0
	var out []types.Loc
	for _, p := range rs {
		var pieces []types.Piece
		i, f := ints, floats
		ok := types.ScalarParts(p.Type, func(size int64, float bool) bool {
			if float {
				if f >= len(t.arch.GoFloatRegs) {
					return false
				}
				pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: t.arch.GoFloatRegs[f], Size: size, Vector: true})
				f++
				return true
			}
			if i >= len(t.arch.GoIntRegs) {
				return false
			}
			pieces = append(pieces, types.Piece{Kind: types.LocReg, Reg: t.arch.GoIntRegs[i], Size: size})
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
func (t *target) goResult(fn *types.Func, i int) (types.Loc, types.Type, string) {
	var rs []types.Param
	for _, p := range fn.Params {
		if p.Result {
			rs = append(rs, p)
		}
	}
	locs, why := goAssign(fn, rs, t)
	if why != "" && i == 0 || i >= len(locs) {
		return types.Loc{}, nil, "result not found"
	}
	if len(locs[i].Pieces) == 0 {
		return types.Loc{}, nil, fmt.Sprintf("the result %s is returned on the stack", goName(rs[i].Name))
	}
	return locs[i], rs[i].Type, ""
}

// goStackResults is where a Go function of the stack calling convention
// (ABI0, before the register ABI) leaves its results at a RET: in its
// caller's argument area, which starts just above the return address
// (types.GoStackOffsets), on x86-64.
func (t *target) goStackResults(fn *types.Func) ([]types.Loc, string) {
	if t.arch.Name != "x86_64" {
		return nil, fmt.Sprintf("the results of Go before the register ABI are read on x86-64 only, not %s", t.arch.Name)
	}
	offs, ok := types.GoStackOffsets(fn.Params, 8)
	if !ok {
		return nil, "a parameter's size is not known: the results on the stack cannot be placed"
	}
	var out []types.Loc
	for i, p := range fn.Params {
		if p.Result {
			out = append(out, types.Loc{Pieces: []types.Piece{{Kind: types.LocMem, Reg: t.arch.SP, Offset: t.arch.EntryCFA + offs[i]}}})
		}
	}
	return out, ""
}

// goRegABI reports whether the binary's Go code takes its arguments and
// results in registers: its build information names a Go version that
// does on its architecture (arch.GoRegABI), or none.
func (t *target) goRegABI() bool {
	if t.regABI == nil {
		v := ""
		if bi, err := buildinfo.ReadFile(t.path); err == nil {
			v = bi.GoVersion
		}
		ok := t.arch.GoRegABI(v)
		t.regABI = &ok
	}
	return *t.regABI
}

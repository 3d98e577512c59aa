package code

import (
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/types"
)

// pclnInlines adds the inline trees of a Go binary's .gopclntab to fns
// (its functions, from the same table): each inlined call becomes an
// InlineSite of its callee, entered at the call's inline mark (an
// instruction of the caller that runs once per call; see
// pcln.InlinedCall), nested as the tree nests. A callee with no
// out-of-line copy becomes a function of its own, with no code. Arguments
// of inlined calls are not recorded in the table. It returns fns with
// those callees appended, and the names of those that are wrappers the
// compiler made (pcln.InlinedCall.Wrapper).
func pclnInlines(ef *elfx.File, t *pcln.Table, fns []*types.Func) ([]*types.Func, []string) {
	tree, err := t.Inlines(ef)
	if err != nil || len(tree) == 0 {
		return fns, nil
	}
	var wrappers []string
	byName := make(map[string]*types.Func, len(fns))
	for _, fn := range fns {
		if _, ok := byName[fn.Name]; !ok {
			byName[fn.Name] = fn
		}
	}
	n := len(fns)
	for i := 0; i < n; i++ {
		host := fns[i]
		calls := tree[host.LowPC]
		if len(calls) == 0 {
			continue
		}
		inst := &types.Instance{Entry: host.LowPC, Ranges: host.Ranges}
		sites := make([]*types.InlineSite, len(calls))
		for k, c := range calls {
			if c.Wrapper {
				wrappers = append(wrappers, c.Callee)
			}
			callee := byName[c.Callee]
			if callee == nil {
				callee = &types.Func{Name: c.Callee, Linkage: c.Callee, Lang: types.LangGo, SymbolOnly: true}
				byName[c.Callee] = callee
				fns = append(fns, callee)
			}
			s := &types.InlineSite{Caller: host.Name, EntryPC: c.PC, Ranges: c.Ranges, CallFile: c.File, CallLine: c.Line, Callee: callee}
			if len(s.Ranges) == 0 {
				s.Ranges = [][2]uint64{{c.PC, c.PC + 1}}
			}
			if c.Parent >= 0 {
				s.Parent = sites[c.Parent]
			}
			sites[k] = s
			inst.Sites = append(inst.Sites, s)
			callee.Inlined = append(callee.Inlined, s)
		}
		host.Instances = append(host.Instances, inst)
	}
	return fns, wrappers
}

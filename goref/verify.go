package goref

import (
	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/types"
)

// layoutCheck is what verifyLayouts found.
type layoutCheck struct {
	structs, fields int      // checked against the binary
	changed         []string // T.field refused
}

// verifyLayouts checks every member of the struct types the parameters of
// fns reach (through pointers and members) against the layouts the
// binary's own runtime type descriptors record: a member the binary's
// struct lacks, or places elsewhere, or gives another size, leaves
// Members for Dynamic (types.DynamicChanged), so that a probe refuses it
// with that reason rather than read the wrong bytes. Structs the binary
// has no descriptor of stay as the reference has them.
func verifyLayouts(m *code.Model, goVersion string, fns []*types.Func) layoutCheck {
	var c layoutCheck
	have, err := m.GoStructs(goVersion)
	if err != nil {
		return c
	}
	seen := map[types.Type]bool{}
	var visit func(t types.Type, depth int)
	visit = func(t types.Type, depth int) {
		t = types.Resolve(t)
		if t == nil || seen[t] || depth > 12 {
			return
		}
		seen[t] = true
		switch v := t.(type) {
		case *types.Pointer:
			visit(v.Target, depth+1)
		case *types.Array:
			visit(v.Elem, depth+1)
		case *types.Struct:
			if fs, ok := have[v.Name]; ok {
				c.structs++
				c.fields += len(v.Members)
				c.changed = append(c.changed, refuseChanged(v, fs)...)
			}
			for _, mm := range v.Members {
				visit(mm.Type, depth+1)
			}
		}
	}
	for _, fn := range fns {
		for _, p := range fn.Params {
			visit(p.Type, 0)
		}
	}
	return c
}

// refuseChanged moves the members of s that fs contradicts to s.Dynamic.
func refuseChanged(s *types.Struct, fs []pcln.Field) []string {
	var keep []types.Member
	var out []string
	for _, mm := range s.Members {
		size, err := types.Sizeof(mm.Type)
		ok := false
		for _, f := range fs {
			if f.Name == mm.Name {
				ok = err == nil && uint64(mm.ByteOffset()) == f.Offset && uint64(size) == f.Size && mm.BitSize == 0
				break
			}
		}
		if ok || mm.Name == "" {
			keep = append(keep, mm)
			continue
		}
		mm.Dynamic = types.DynamicChanged
		s.Dynamic = append(s.Dynamic, mm)
		out = append(out, s.Name+"."+mm.Name)
	}
	s.Members = keep
	return out
}

package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/types"
)

// selection says which composite types a gopahole run prints.
type selection struct {
	classes    []string // -C: exact or unique short names
	prefix     string   // -y
	exclude    string   // -x
	contains   string   // -i: types with a member of this type
	pointersTo string   // -f: types with a member pointing to this type
	structs    bool     // --structs
	unions     bool     // --unions
	langs      []types.Lang
	skipMiss   bool
	anon       bool // -a: include anonymous types (named by a typedef)
}

// named is a composite type with the name it is shown under (a typedef's
// name for typedef struct { ... } name).
type named struct {
	Name   string
	Struct *types.Struct
}

// selectTypes returns the composites of spec that sel picks, in load order.
func selectTypes(spec *types.Spec, sel *selection) ([]named, error) {
	var out []named
	if len(sel.classes) > 0 {
		seen := map[*types.Struct]bool{}
		for _, name := range sel.classes {
			ts, err := spec.Find(name)
			if err != nil {
				if sel.skipMiss {
					continue
				}
				if insts := instantiations(spec, name); errors.Is(err, types.ErrNotFound) && len(insts) > 0 {
					if len(insts) > 8 {
						insts = append(insts[:8:8], "...")
					}
					return nil, fmt.Errorf("%s: type %q is generic: name an instantiation: %s", spec.Path, name, strings.Join(insts, ", "))
				}
				return nil, fmt.Errorf("%s: %w", spec.Path, err)
			}
			found := false
			for _, t := range ts {
				if n, ok := composite(t); ok && !seen[n.Struct] {
					seen[n.Struct] = true
					out = append(out, n)
					found = true
				}
			}
			if !found && !sel.skipMiss {
				return nil, fmt.Errorf("%s: %q is a %s, not a struct, union or class", spec.Path, name, kindWord(ts[0]))
			}
		}
		return filter(out, sel), nil
	}
	pk := newPicker(sel)
	for _, t := range spec.Types() {
		if n, ok := pk.take(t); ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// picker picks the types a run without -C shows, one at a time, so that a
// loader can hand them over as it converts them.
type picker struct {
	sel  *selection
	seen map[*types.Struct]bool
}

func newPicker(sel *selection) *picker {
	return &picker{sel: sel, seen: map[*types.Struct]bool{}}
}

// take reports whether t is shown, and under which name.
func (pk *picker) take(t types.Type) (named, bool) {
	n, ok := composite(t)
	if !ok || pk.seen[n.Struct] {
		return n, false
	}
	if _, isTypedef := t.(*types.Typedef); isTypedef && !pk.sel.anon {
		return n, false
	}
	pk.seen[n.Struct] = true
	if len(filter([]named{n}, pk.sel)) == 0 {
		return n, false
	}
	return n, true
}

func composite(t types.Type) (named, bool) {
	switch v := t.(type) {
	case *types.Struct:
		if v.Incomplete {
			return named{}, false
		}
		return named{v.Name, v}, true
	case *types.Typedef:
		if s, ok := types.Resolve(v).(*types.Struct); ok && !s.Incomplete && s.Name == "" {
			return named{v.Name, s}, true
		}
	}
	return named{}, false
}

func kindWord(t types.Type) string {
	switch t.(type) {
	case *types.Enum:
		return "enum"
	case *types.Typedef:
		return "typedef"
	case *types.Base:
		return "base type"
	case *types.Pointer:
		return "pointer"
	}
	return "type"
}

func filter(in []named, sel *selection) []named {
	var out []named
	for _, n := range in {
		s := n.Struct
		if sel.structs && !sel.unions && s.Kind == types.KindUnion {
			continue
		}
		if sel.unions && !sel.structs && s.Kind != types.KindUnion {
			continue
		}
		if sel.prefix != "" && !strings.HasPrefix(n.Name, sel.prefix) {
			continue
		}
		if sel.exclude != "" && strings.HasPrefix(n.Name, sel.exclude) {
			continue
		}
		if len(sel.langs) > 0 && !langIn(s.Lang, sel.langs) {
			continue
		}
		if sel.contains != "" && !hasMember(s, sel.contains, false) {
			continue
		}
		if sel.pointersTo != "" && !hasMember(s, sel.pointersTo, true) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func langIn(l types.Lang, ls []types.Lang) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// hasMember reports whether s has a member of the named type (through
// typedefs, qualifiers and arrays), or with ptr a member pointing to it.
func hasMember(s *types.Struct, name string, ptr bool) bool {
	for i := range s.Members {
		if refersTo(s.Members[i].Type, name, ptr) {
			return true
		}
	}
	if s.Variants != nil {
		for _, v := range s.Variants.Variants {
			if refersTo(v.Member.Type, name, ptr) {
				return true
			}
		}
	}
	return false
}

func refersTo(t types.Type, name string, ptr bool) bool {
	viaPtr := false
	for i := 0; i < types.MaxDepth && t != nil; i++ {
		if n := t.TypeName(); n != "" && matchesName(n, name) && viaPtr == ptr {
			if _, isPtr := t.(*types.Pointer); !isPtr {
				return true
			}
		}
		switch v := t.(type) {
		case *types.Typedef:
			t = v.Target
		case *types.Qualifier:
			t = v.Target
		case *types.Array:
			t = v.Elem
		case *types.Pointer:
			if viaPtr {
				return false
			}
			viaPtr = true
			t = v.Target
		default:
			return false
		}
	}
	return false
}

func matchesName(full, want string) bool {
	return full == want || types.ShortName(full) == want
}

// instantiations lists the structs that instantiate a generic type or
// template called name, by its full or short name (main.Pair or Pair:
// main.Pair[int,string], main.Pair[int8,bool]; Generic: layouts::Generic<u32>),
// sorted.
func instantiations(spec *types.Spec, name string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range spec.Types() {
		st, ok := t.(*types.Struct)
		if !ok || st.Incomplete {
			continue
		}
		full := st.Name
		i := strings.IndexAny(full, "[<")
		if i <= 0 || seen[full] {
			continue
		}
		base := full[:i]
		if strings.ContainsAny(base, " *&()") {
			continue
		}
		if base == name || strings.HasSuffix(base, "."+name) || strings.HasSuffix(base, "::"+name) || strings.HasSuffix(base, "/"+name) {
			seen[full] = true
			out = append(out, full)
		}
	}
	sort.Strings(out)
	return out
}

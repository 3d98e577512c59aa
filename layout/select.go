package layout

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"weak"

	"github.com/binscope/binscope/types"
)

// Selection says which composite types a run prints, with pahole's
// filters. The zero Selection picks every named struct, union and class.
type Selection struct {
	Classes     []string // -C: exact or unique short names; empty means all
	Prefix      string   // -y: names starting with this
	Exclude     string   // -x: not names starting with this
	Contains    string   // -i: types with a member of this type
	PointersTo  string   // -f: types with a member pointing to this type
	Structs     bool     // --structs: structs and classes only
	Unions      bool     // --unions: unions only
	Langs       []types.Lang
	SkipMissing bool // --skip_missing: a name in Classes that is not found is no error
	Anon        bool // -a: include anonymous types: those named by a typedef, and those nested in the types shown
	// DeclExclude leaves out the types declared in files whose names
	// start with it (-D).
	DeclExclude string
}

// Named is a composite type with the name it is shown under (a typedef's
// name for typedef struct { ... } name).
type Named struct {
	Name   string
	Struct *types.Struct
	// Decl, when Struct is nil, is a typedef or an enum that -C named:
	// printed as pahole prints it (typedef struct _IO_FILE FILE;).
	Decl types.Type
}

// Select returns the composites of spec that sel picks, in load order.
// A name in sel.Classes that is not found is an error wrapping
// types.ErrNotFound (for a generic type, one naming its instantiations);
// one that names no composite says what it names.
func Select(spec *types.Spec, sel *Selection) ([]Named, error) {
	var out []Named
	if len(sel.Classes) > 0 {
		seen := map[*types.Struct]bool{}
		for _, name := range sel.Classes {
			ts, err := spec.Find(name)
			if err != nil {
				if sel.SkipMissing {
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
			if !found {
				switch v := ts[0].(type) {
				case *types.Typedef:
					found = v.Lang.CLike()
				case *types.Enum:
					found = v.Lang.CLike()
				}
				if found {
					out = append(out, Named{Name: name, Decl: ts[0]})
				}
			}
			if !found && !sel.SkipMissing {
				return nil, fmt.Errorf("%s: %q is a %s, not a struct, union, class, enum or typedef", spec.Path, name, kindWord(ts[0]))
			}
		}
		return filter(out, sel), nil
	}
	pk := NewPicker(sel)
	for _, t := range spec.Types() {
		out = append(out, pk.TakeAll(t)...)
	}
	return out, nil
}

// Picker picks the types a selection without Classes shows, one at a
// time, so that a loader can hand them over as it converts them. What it
// took it holds weakly: a loader that streams (dwarf.File.Stream) drops
// the types it handed over, and a Picker holding them would keep every
// type of the file.
type Picker struct {
	sel  *Selection
	seen map[weak.Pointer[types.Struct]]bool
}

// NewPicker starts picking for sel.
func NewPicker(sel *Selection) *Picker {
	return &Picker{sel: sel, seen: map[weak.Pointer[types.Struct]]bool{}}
}

// Take reports whether t is shown, and under which name; a composite is
// taken once, under the first name it is met by.
func (pk *Picker) Take(t types.Type) (Named, bool) {
	n, ok := composite(t)
	if !ok || pk.seen[weak.Make(n.Struct)] {
		return n, false
	}
	if _, isTypedef := t.(*types.Typedef); isTypedef && !pk.sel.Anon {
		return n, false
	}
	pk.seen[weak.Make(n.Struct)] = true
	if len(filter([]Named{n}, pk.sel)) == 0 {
		return n, false
	}
	return n, true
}

// TakeAll is Take with, when the selection includes anonymous types
// (-a), the anonymous structs and unions nested in the type taken, before
// it and under pahole's name for them, "(null)".
func (pk *Picker) TakeAll(t types.Type) []Named {
	n, ok := pk.Take(t)
	if !ok {
		return nil
	}
	if !pk.sel.Anon {
		return []Named{n}
	}
	var out []Named
	pk.nested(n.Struct, &out, 0)
	return append(out, n)
}

// nested appends the anonymous composites among s's member types, inner
// ones first.
func (pk *Picker) nested(s *types.Struct, out *[]Named, depth int) {
	if depth > types.MaxDepth {
		return
	}
	for i := range s.Members {
		t := s.Members[i].Type
		for j := 0; j < types.MaxDepth && t != nil; j++ {
			switch v := t.(type) {
			case *types.Qualifier:
				t = v.Target
				continue
			case *types.Array:
				t = v.Elem
				continue
			case *types.Pointer:
				t = v.Target
				continue
			case *types.Struct:
				if w := weak.Make(v); v.Name == "" && !v.Incomplete && !pk.seen[w] {
					pk.seen[w] = true
					pk.nested(v, out, depth+1)
					*out = append(*out, filter([]Named{{Name: "(null)", Struct: v}}, pk.sel)...)
				}
			}
			break
		}
	}
}

func composite(t types.Type) (Named, bool) {
	switch v := t.(type) {
	case *types.Struct:
		if v.Incomplete {
			return Named{}, false
		}
		return Named{Name: v.Name, Struct: v}, true
	case *types.Typedef:
		if s, ok := types.Resolve(v).(*types.Struct); ok && !s.Incomplete && s.Name == "" {
			return Named{Name: v.Name, Struct: s}, true
		}
	}
	return Named{}, false
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

func filter(in []Named, sel *Selection) []Named {
	var out []Named
	for _, n := range in {
		s := n.Struct
		if s == nil {
			if !sel.Structs && !sel.Unions {
				out = append(out, n)
			}
			continue
		}
		if sel.Structs && !sel.Unions && s.Kind == types.KindUnion {
			continue
		}
		if sel.Unions && !sel.Structs && s.Kind != types.KindUnion {
			continue
		}
		if sel.Prefix != "" && !strings.HasPrefix(n.Name, sel.Prefix) {
			continue
		}
		if sel.Exclude != "" && strings.HasPrefix(n.Name, sel.Exclude) {
			continue
		}
		if sel.DeclExclude != "" && strings.HasPrefix(s.Decl.File, sel.DeclExclude) {
			continue
		}
		if len(sel.Langs) > 0 && !langIn(s.Lang, sel.Langs) {
			continue
		}
		if sel.Contains != "" && !hasMember(s, sel.Contains, false) {
			continue
		}
		if sel.PointersTo != "" && !hasMember(s, sel.PointersTo, true) {
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

// Roots are the picked types as a C header declares them: each composite,
// or the typedef that names an anonymous one (typedef struct { ... } name).
func Roots(spec *types.Spec, picked []Named) []types.Type {
	roots := make([]types.Type, 0, len(picked))
	for _, n := range picked {
		if n.Struct == nil {
			// a typedef or an enum -C named; a typedef's struct whole,
			// not just declared (FILE is struct _IO_FILE)
			if st, ok := types.Resolve(n.Decl).(*types.Struct); ok && !st.Incomplete {
				roots = append(roots, st)
			}
			roots = append(roots, n.Decl)
			continue
		}
		var t types.Type = n.Struct
		if n.Struct.Name == "" {
			for _, c := range spec.Lookup(n.Name) {
				if _, ok := c.(*types.Typedef); ok {
					t = c
				}
			}
		}
		roots = append(roots, t)
	}
	return roots
}

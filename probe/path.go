package probe

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/types"
)

// checkPath walks path over the type t alone, before any site is looked
// at: a field the type does not have (a misspelling), a -> through
// something that is not a pointer, an index past an array's end are
// mistakes of the definition, the same at every site, and so errors; a
// value a site cannot read is only that site's (Fetch.Unavailable).
// expr is the argument as written, for the message.
func checkPath(expr string, t types.Type, path []Step) error {
	for _, st := range path {
		rt := types.Resolve(t)
		if st.Kind == Deref {
			ptr, ok := rt.(*types.Pointer)
			if _, isStruct := rt.(*types.Struct); isStruct {
				return fmt.Errorf("%s: ->%s: %s is a struct, not a pointer (use .%s)", expr, st.Name, types.TypeString(t), st.Name)
			}
			if !ok {
				return fmt.Errorf("%s: ->%s: %s is not a pointer", expr, st.Name, types.TypeString(t))
			}
			t, rt = ptr.Target, types.Resolve(ptr.Target)
		}
		switch st.Kind {
		case Field, Deref:
			s, ok := rt.(*types.Struct)
			if !ok {
				return fmt.Errorf("%s: .%s: %s is not a struct", expr, st.Name, types.TypeString(t))
			}
			m := member(s, st.Name)
			if d := dynamicMember(s, st.Name); m == nil && d != nil {
				return fmt.Errorf("%s: %s.%s: %s", expr, s.Name, st.Name, d.Dynamic)
			}
			if m == nil {
				return noField(expr, s, st.Name)
			}
			t = m.Type
		case Index:
			switch v := rt.(type) {
			case *types.Array:
				// A zero-length (GNU) or flexible array member is as long
				// as the allocation makes it: any index may be read.
				if v.Count > 0 && st.Index >= v.Count {
					return fmt.Errorf("%s: [%d]: %s has %d elements", expr, st.Index, types.TypeString(t), v.Count)
				}
				t = v.Elem
			case *types.Pointer:
				t = v.Target
			default:
				return fmt.Errorf("%s: [%d]: %s is neither an array nor a pointer", expr, st.Index, types.TypeString(t))
			}
		}
	}
	return nil
}

// noField says which fields are closest to a misspelled one.
func noField(expr string, s *types.Struct, name string) error {
	var names []string
	for _, m := range s.Members {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	what := s.Name
	if what == "" {
		what = "the " + s.Kind.String()
	}
	if near := types.Closest(names, name, 3); len(near) > 0 {
		return fmt.Errorf("%s: %s has no field %s (closest: %s)", expr, what, name, strings.Join(near, ", "))
	}
	return fmt.Errorf("%s: %s has no field %s (fields: %s)", expr, what, name, strings.Join(names, ", "))
}

package probe

import (
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// Whole-struct arguments ('f *c'): the struct's bytes are copied in BPF
// into the argument's slot and the slots after it (continuation parts), so
// the record keeps one layout (EventHeader + ArgSlot*k for argument k);
// each text member (a Go string, a C char *) directly in the struct or in
// a struct it holds by value gets a part of its own that reads the text,
// one level deep. Events print the struct with its members' names in the
// program's language (package pretty); a member beyond the bytes copied
// prints `?`.
// textParts bounds the text members followed.
const textParts = 4

// wholeStruct is finish for a struct in memory, read whole: the fetch of
// its bytes; expandStruct adds its parts once its index is known.
func wholeStruct(f spec.Fetch, c spec.Chain, t types.Type) spec.Fetch {
	size, err := types.Sizeof(t)
	if err != nil || size <= 0 {
		f.Type, f.Unavailable = "x64", "a struct without a size"
		return f
	}
	f.Type, f.Layout, f.Chains = "struct", t, []spec.Chain{c}
	f.Size = min(size, spec.StructSlots*spec.ArgSlot-8)
	return f
}

// expandStruct returns the fetches a site's argument list gets for f,
// the argument at index k: f itself and, for a "struct", its parts.
func expandStruct(f spec.Fetch, k int) []spec.Fetch {
	if f.Type != "struct" || f.Unavailable != "" {
		return []spec.Fetch{f}
	}
	out := []spec.Fetch{f}
	for n := spec.ArgSlot - 8; int64(n) < f.Size; n += spec.ArgSlot {
		out = append(out, spec.Fetch{Type: "x64", Part: &spec.Part{Of: k, Offset: -1}})
	}
	base := f.Chains[0]
	for _, m := range textMembers(f.Layout, 0, 0) {
		if len(out)-1 >= spec.StructSlots+textParts || m.off+16 > f.Size {
			break
		}
		at := func(d int64) spec.Chain {
			c := base
			c.Derefs = append(append([]int64{}, base.Derefs[:len(base.Derefs)-1]...), base.Derefs[len(base.Derefs)-1]+m.off+d)
			if n := len(c.Access); n > 0 {
				// A part's offset is not a field path: fixed (checked
				// where a relocated program loads).
				c.Access = append(append([]spec.Access{}, c.Access[:n-1]...), spec.Access{})
			}
			return c
		}
		p := spec.Fetch{Name: m.name, Type: m.typ, Part: &spec.Part{Of: k, Offset: m.off}}
		if m.typ == "string" {
			p.Size, p.Chains = 8, []spec.Chain{at(0), at(8)}
		} else {
			p.Size, p.Chains = 8, []spec.Chain{at(0)}
		}
		out = append(out, p)
	}
	return out
}

type textMember struct {
	name string
	off  int64
	typ  string // "string" or "cstring"
}

// textMembers lists the text members of t at base bytes, through the
// structs it holds by value.
func textMembers(t types.Type, base int64, depth int) []textMember {
	st, ok := types.Resolve(t).(*types.Struct)
	if !ok || depth > 3 || st.Variants != nil {
		return nil
	}
	var out []textMember
	for _, m := range st.Members {
		if m.BitSize != 0 || m.Dynamic != types.DynamicNone {
			continue
		}
		off := base + m.ByteOffset()
		switch v := types.Resolve(m.Type).(type) {
		case *types.Struct:
			if isText(v) {
				out = append(out, textMember{m.Name, off, "string"})
			} else {
				out = append(out, textMembers(v, off, depth+1)...)
			}
		case *types.Pointer:
			if defaultType(v) == "cstring" {
				out = append(out, textMember{m.Name, off, "cstring"})
			}
		}
	}
	return out
}

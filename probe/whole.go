package probe

import (
	"encoding/binary"
	"strings"

	"github.com/binscope/binscope/pretty"
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
const (
	// structSlots bounds the slots one struct's bytes take
	// (8*ArgSlot-8 = 568 bytes); textParts, the text members followed.
	structSlots = 8
	textParts   = 4
)

// wholeStruct is finish for a struct in memory, read whole: the fetch of
// its bytes; expandStruct adds its parts once its index is known.
func wholeStruct(f Fetch, c Chain, t types.Type) Fetch {
	size, err := types.Sizeof(t)
	if err != nil || size <= 0 {
		f.Type, f.Unavailable = "x64", "a struct without a size"
		return f
	}
	f.Type, f.Layout, f.Chains = "struct", t, []Chain{c}
	f.Size = min(size, structSlots*ArgSlot-8)
	return f
}

// expandStruct returns the fetches a site's argument list gets for f,
// the argument at index k: f itself and, for a "struct", its parts.
func expandStruct(f Fetch, k int) []Fetch {
	if f.Type != "struct" || f.Unavailable != "" {
		return []Fetch{f}
	}
	out := []Fetch{f}
	for n := ArgSlot - 8; int64(n) < f.Size; n += ArgSlot {
		out = append(out, Fetch{Type: "x64", Part: &Part{Of: k, Offset: -1}})
	}
	base := f.Chains[0]
	for _, m := range textMembers(f.Layout, 0, 0) {
		if len(out)-1 >= structSlots+textParts || m.off+16 > f.Size {
			break
		}
		at := func(d int64) Chain {
			c := base
			c.Derefs = append(append([]int64{}, base.Derefs[:len(base.Derefs)-1]...), base.Derefs[len(base.Derefs)-1]+m.off+d)
			return c
		}
		p := Fetch{Name: m.name, Type: m.typ, Part: &Part{Of: k, Offset: m.off}}
		if m.typ == "string" {
			p.Size, p.Chains = 8, []Chain{at(0), at(8)}
		} else {
			p.Size, p.Chains = 8, []Chain{at(0)}
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

// structValue fills a "struct" value from its slots in the record (at
// the argument's slot) and the texts its parts read.
func structValue(v *Value, f Fetch, rec []byte, slot int) {
	end := min(len(rec), slot+8+int(f.Size))
	v.Raw = append([]byte(nil), rec[slot+8:end]...)
	v.Layout = f.Layout
}

// String of a "struct" value: its members, one line, in the program's
// language; its bytes in hex without the type.
func (v Value) structText(oneLine bool) (string, any) {
	if v.Layout == nil {
		return fmtHex(v.Raw), fmtHex(v.Raw)
	}
	texts := map[uint64][]byte{}
	for off, s := range v.Texts {
		if off+8 <= int64(len(v.Raw)) {
			texts[binary.LittleEndian.Uint64(v.Raw[off:])] = []byte(s)
		}
	}
	o := &pretty.Options{StringMax: StringMax, Mem: func(addr uint64, n int) ([]byte, error) {
		if b, ok := texts[addr]; ok {
			return b[:min(n, len(b))], nil
		}
		return nil, errNotCopied
	}}
	n := pretty.Decode(v.Layout, v.Raw, o)
	return pretty.Text(v.Layout, n, o), pretty.JSONValue(n)
}

func fmtHex(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteString("0123456789abcdef"[c>>4 : c>>4+1])
		sb.WriteString("0123456789abcdef"[c&15 : c&15+1])
	}
	return sb.String()
}

type notCopied struct{}

func (notCopied) Error() string { return "not copied by the probe" }

var errNotCopied error = notCopied{}

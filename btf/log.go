package btf

import (
	"bytes"
	"fmt"
	"io"

	cbtf "github.com/cilium/ebpf/btf"
)

// WriteLog lists the type records of raw BTF on w, one per line with its
// members, values or parameters beneath, as pahole -V lists the types it
// encodes: "[2] STRUCT simple size=16", "\ta type_id=1 bits_offset=0".
func WriteLog(w io.Writer, raw []byte) error {
	spec, err := cbtf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	id := func(t cbtf.Type) cbtf.TypeID {
		i, _ := spec.TypeID(t)
		return i
	}
	// The records' own kinds: cilium/ebpf reads an ENUM of 8 bytes and an
	// ENUM64 into one Enum.
	sec, err := sectionsOf(raw)
	if err != nil {
		return err
	}
	enum64 := map[cbtf.TypeID]bool{}
	if err := sec.eachRecord(func(i uint32, _ int, _, kind uint32, _ int) {
		if kind == kindEnum64 {
			enum64[cbtf.TypeID(i)] = true
		}
	}); err != nil {
		return err
	}
	for t, err := range spec.All() {
		if err != nil {
			return err
		}
		if _, void := t.(*cbtf.Void); void {
			continue
		}
		fmt.Fprintf(w, "[%d] ", id(t))
		switch v := t.(type) {
		case *cbtf.Int:
			fmt.Fprintf(w, "INT %s size=%d nr_bits=%d encoding=%s\n", v.Name, v.Size, v.Size*8, encodingName(v.Encoding))
		case *cbtf.Float:
			fmt.Fprintf(w, "FLOAT %s size=%d\n", v.Name, v.Size)
		case *cbtf.Struct, *cbtf.Union:
			kind, size, ms := "STRUCT", uint32(0), []cbtf.Member(nil)
			if s, ok := v.(*cbtf.Struct); ok {
				size, ms = s.Size, s.Members
			} else {
				u := v.(*cbtf.Union)
				kind, size, ms = "UNION", u.Size, u.Members
			}
			fmt.Fprintf(w, "%s %s size=%d\n", kind, t.TypeName(), size)
			for _, m := range ms {
				fmt.Fprintf(w, "\t%s type_id=%d bits_offset=%d", m.Name, id(m.Type), m.Offset)
				if m.BitfieldSize > 0 {
					fmt.Fprintf(w, " bitfield_size=%d", m.BitfieldSize)
				}
				fmt.Fprintln(w)
			}
		case *cbtf.Enum:
			kind := "ENUM"
			if enum64[id(t)] {
				kind = "ENUM64"
			}
			fmt.Fprintf(w, "%s %s size=%d\n", kind, v.Name, v.Size)
			for _, e := range v.Values {
				fmt.Fprintf(w, "\t%s val=%d\n", e.Name, e.Value)
			}
		case *cbtf.Array:
			fmt.Fprintf(w, "ARRAY type_id=%d index_type_id=%d nr_elems=%d\n", id(v.Type), id(v.Index), v.Nelems)
		case *cbtf.FuncProto:
			fmt.Fprintf(w, "FUNC_PROTO return=%d args=(", id(v.Return))
			for i, p := range v.Params {
				if i > 0 {
					fmt.Fprint(w, ", ")
				}
				fmt.Fprintf(w, "%d %s", id(p.Type), p.Name)
			}
			fmt.Fprintln(w, ")")
		case *cbtf.Func:
			fmt.Fprintf(w, "FUNC %s type_id=%d\n", v.Name, id(v.Type))
		case *cbtf.Var:
			fmt.Fprintf(w, "VAR %s type_id=%d\n", v.Name, id(v.Type))
		case *cbtf.Datasec:
			fmt.Fprintf(w, "DATASEC %s size=%d vlen=%d\n", v.Name, v.Size, len(v.Vars))
		case *cbtf.Fwd:
			fmt.Fprintf(w, "FWD %s %s\n", v.Name, v.Kind)
		default:
			kind, target := refKind(t)
			fmt.Fprintf(w, "%s %s type_id=%d\n", kind, t.TypeName(), id(target))
		}
	}
	return nil
}

func encodingName(e cbtf.IntEncoding) string {
	switch e {
	case cbtf.Signed:
		return "SIGNED"
	case cbtf.Char:
		return "CHAR"
	case cbtf.Bool:
		return "BOOL"
	}
	return "(none)"
}

// refKind names the kinds that refer to one type, and that type.
func refKind(t cbtf.Type) (string, cbtf.Type) {
	switch v := t.(type) {
	case *cbtf.Pointer:
		return "PTR", v.Target
	case *cbtf.Typedef:
		return "TYPEDEF", v.Type
	case *cbtf.Const:
		return "CONST", v.Type
	case *cbtf.Volatile:
		return "VOLATILE", v.Type
	case *cbtf.Restrict:
		return "RESTRICT", v.Type
	case *cbtf.TypeTag:
		return "TYPE_TAG", v.Type
	}
	return fmt.Sprintf("%T", t), nil
}

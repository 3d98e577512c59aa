package spec

import (
	"encoding/binary"
	"strings"

	"github.com/binscope/binscope/pretty"
)

// A whole-struct argument ("struct") takes its slot and the slots after
// it, up to StructSlots of them (StructSlots*ArgSlot-8 = 568 bytes of the
// struct), in the record; its text members each have a part of their own
// (Fetch.Part) after those.

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
	o := &pretty.Options{StringMax: StringMax, CharText: true, Mem: func(addr uint64, n int) ([]byte, error) {
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

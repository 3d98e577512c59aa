package pretty

import (
	"strconv"

	"github.com/binscope/binscope/types"
)

// goValue decodes a Go string through Mem as a quoted string; a slice as
// its elements (at most StringMax bytes of them). Without Mem, or when
// memory cannot be read, ok is false and the header prints as a struct
// (pointer, len, cap): the bytes are not in the record.
func (d *decoder) goValue(s *types.Struct, b []byte) (*Node, bool) {
	if d.o == nil || d.o.Mem == nil || s.GoKind != types.GoString && s.GoKind != types.GoSlice {
		return nil, false
	}
	if len(s.Members) < 2 || len(b) < 16 {
		return nil, false
	}
	ptr, n := d.uint(b[0:8]), d.uint(b[8:16])
	if s.GoKind == types.GoString {
		if n == 0 {
			return &Node{Kind: Scalar, Text: `""`, JSON: ""}, true
		}
		want, more := int(n), ""
		if want > d.stringMax() {
			want, more = d.stringMax(), "..."
		}
		raw, err := d.o.Mem(ptr, want)
		if err != nil {
			return nil, false
		}
		return &Node{Kind: Scalar, Text: strconv.Quote(string(raw)) + more, JSON: string(raw)}, true
	}
	pt, ok := types.Resolve(s.Members[0].Type).(*types.Pointer)
	if !ok {
		return nil, false
	}
	es, err := types.Sizeof(pt.Target)
	if err != nil || es <= 0 {
		return nil, false
	}
	count := int64(n)
	if count*es > int64(d.stringMax()) {
		count = int64(d.stringMax()) / es
	}
	raw, err := d.o.Mem(ptr, int(count*es))
	if err != nil {
		return nil, false
	}
	out := &Node{Kind: List}
	for i := int64(0); i < count; i++ {
		out.Elems = append(out.Elems, d.value(pt.Target, raw[i*es:(i+1)*es], 1))
	}
	if uint64(count) < n {
		out.Elems = append(out.Elems, unknown(strconv.FormatUint(n-uint64(count), 10)+" more elements not read"))
	}
	return out, true
}

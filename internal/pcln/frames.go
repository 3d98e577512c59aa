package pcln

import (
	"fmt"

	"github.com/binscope/binscope/internal/elfx"
)

// SPSpan is a stretch [Lo, Hi) of a Go function's code over which the
// stack pointer lies Delta bytes below where it was at the function's
// entry: the runtime's pcsp table, which its own tracebacks unwind by,
// and from which the Go linker writes the call frame information of
// .debug_frame (a binary built with -s -w has none of it).
type SPSpan struct {
	Lo, Hi uint64
	Delta  int64
}

// SPDeltas reads every function's pcsp table: the spans in address
// order. A table of another word size gives none and no error.
func (t *Table) SPDeltas(ef *elfx.File) (spans []SPSpan, err error) {
	defer elfx.Catch(ef.Path, ".gopclntab", "pcsp tables", &spans, &err)
	ff, ok := t.format()
	if !ok {
		return nil, nil
	}
	v := view{b: t.Data, bad: new(bool)}
	pctab := v.from(v.u64(uint64(ff.pctab)))
	quantum := uint64(t.Data[6])
	t.eachFunc(ff, v, func(entry, end, _ uint64, f view) {
		off := uint64(f.u32(uint64(ff.pcsp)))
		if off == 0 || off >= uint64(len(pctab)) || end <= entry {
			return
		}
		for _, s := range pcValues(pctab[off:], entry, end, quantum) {
			spans = append(spans, SPSpan{Lo: s.lo, Hi: s.hi, Delta: int64(s.val)})
		}
	})
	if *v.bad {
		return nil, fmt.Errorf("%s: section .gopclntab: corrupt pcsp table: an offset past the table's end", ef.Path)
	}
	return spans, nil
}

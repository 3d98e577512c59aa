package probe

import (
	"fmt"

	"github.com/binscope/binscope/internal/x86"
	"github.com/binscope/binscope/types"
	"golang.org/x/arch/x86/x86asm"
)

// decode decodes the instructions of [lo, hi).
func (r *Resolver) decode(fn *types.Func, lo, hi uint64, each func(addr uint64, in x86asm.Inst)) error {
	code, err := r.ef.Code(lo, hi-lo)
	if err != nil {
		return err
	}
	for off := 0; off < len(code); {
		in, err := x86.Decode(code[off:])
		if err != nil {
			return fmt.Errorf("%s: %s+%#x: cannot decode the instruction: %v", r.path, fn.Name, lo+uint64(off)-fn.LowPC, err)
		}
		each(lo+uint64(off), in)
		off += in.Len
	}
	return nil
}

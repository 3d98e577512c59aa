package cfi

import (
	"cmp"
	"slices"

	"github.com/binscope/binscope/internal/elfx"
)

// Ranges are the code ranges [lo, hi) that the FDEs of f's .eh_frame and
// .debug_frame describe, in address order: each starts where a function,
// or a separate piece of one (a .cold part), starts, which makes them the
// function starts of a stripped C, C++ or Rust binary. Errors are load's.
func Ranges(f *elfx.File) ([][2]uint64, error) {
	b, err := load(f)
	if err != nil {
		return nil, err
	}
	out := make([][2]uint64, 0, len(b.fdes))
	for _, d := range b.fdes {
		if d.hi > d.lo {
			out = append(out, [2]uint64{d.lo, d.hi})
		}
	}
	slices.SortFunc(out, func(x, y [2]uint64) int {
		return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
	})
	return slices.Compact(out), nil
}

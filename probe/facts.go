package probe

import (
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/elfx"
)

// codeFacts says what a function's instructions compute, from its control
// flow and the file's bytes alone: which bits of a register are known at
// an instruction (knownAt, noOps: knownbits.go), which constant bytes a
// store or a call's argument registers hold (storedBytes: copyconst.go).
type codeFacts struct {
	ef   *elfx.File // the read-only data constants are loaded from
	arch *arch.Arch
}

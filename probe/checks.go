package probe

import "github.com/binscope/binscope/internal/arch"

// valueChecks says whether the place the debug info gives for a value at
// a site holds that value there, from the code around the site: a
// register written since with another variable's value (stale, misnamed,
// staleInCopy: stale.go; opOnOldCopy, keptCopy: oldcopy.go, where the
// code computed the value from a copy made before the write), one place
// read twice and cancelled out (doubled),
// an expression the code contradicts or computes with an operation left
// out (contradicted: evalcheck.go; droppedOp: salvage.go), a stack slot
// the debug info gives only before the store that fills it (spilledAfter:
// slot.go) or that another parameter's register fills (aliasedSlot:
// aliasslot.go), a slot in place of the register the code computes the
// value from (slotOpElsewhere: slotop.go), a register whose uses test some of its bits only
// (bitsOnly: bitsonly.go). Each check takes the site's address and the
// value's expression, and returns why the value is not read, or "".
type valueChecks struct {
	t      *target // the variables the debug info gives at an address (varsAt), the model of code
	arch   *arch.Arch
	frames *frameTable
	flows  *flowIndex
	facts  *codeFacts
	slots  *slotStores
}

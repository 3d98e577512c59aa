package probe

// slotStores says which stores reach a stack slot: DWARF names a slot as
// a register plus an offset, which the call frame information turns into
// the CFA plus an offset (cfaSlot), and the stores into it are found
// along the control flow (reachingStores) and judged for width and
// content (slot.go: reusedSlot, mixedChain; stale.go: overwritten,
// otherWidth).
type slotStores struct {
	frames *frameTable
	flows  *flowIndex
}

package stack

import "github.com/binscope/binscope/types"

// Frame is one function on a stack.
type Frame struct {
	// Name is the symbolized, demangled name, or "module+0x1234" when no
	// symbol covers the address.
	Name string
	// Module is the binary's or library's base name ("app", "libc.so.6"),
	// "[kernel]" for kernel frames; "" when unknown (as after ReadFolded).
	Module string
	// Lang is the language of the function's compile unit.
	Lang types.Lang
	// Inlined marks an inline expansion: a call the compiler expanded at
	// the same address as the frame before it (its caller).
	Inlined bool
	// Kernel marks a kernel frame.
	Kernel bool
	// Addr is the address on the stack (a return address past the
	// first frame; the frames of one address's inline expansions share
	// it), 0 when unknown (as after ReadFolded).
	Addr uint64
	// File and Line are the frame's source position (the call site of
	// the expansion it holds, for a frame with one); Line is 0 when
	// unknown.
	File string
	Line int
	// BuildID is the module's GNU build-id in hex ("" when it has none
	// or is unknown) and Offset the address's offset in the module's
	// file: the position that stays valid across processes.
	BuildID string
	Offset  uint64
}

// Stack is a distinct stack, root first, and how many samples (or probe
// hits) carried it. A Stack with no frames carries samples no function
// can be named for: WriteFolded and Top leave it out, WriteSVG counts it
// in the root frame only.
type Stack struct {
	Frames []Frame
	Count  uint64
}

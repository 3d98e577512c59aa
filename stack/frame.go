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
}

// Stack is a distinct stack, root first, and how many samples (or probe
// hits) carried it. A Stack with no frames carries samples no function
// can be named for: WriteFolded and Top leave it out, WriteSVG counts it
// in the root frame only.
type Stack struct {
	Frames []Frame
	Count  uint64
}

//go:build !linux

package probe

import "github.com/binscope/binscope/stack"

// RawStack is a counted stack as the kernel holds it.
type RawStack struct {
	Pid    int
	User   []uint64
	Kernel []uint64
	Count  uint64
}

// RawStacks is not supported off Linux.
func (p *Profile) RawStacks() ([]RawStack, error) { return nil, ErrNotSupported }

// Mappings is not supported off Linux.
func (p *Profile) Mappings(int) []stack.Mapping { return nil }

// Package flame prints sampled or counted stacks three ways: Brendan Gregg's
// folded format (one line per distinct stack, what the usual flame graph and
// profile viewers read), a self-contained interactive SVG flame graph, and a
// table of the functions with the most samples.
//
// A stack (stack.Stack) is a list of frames, outermost (root) first, with
// the number of samples or hits that carried it. The same frame list may
// appear in several Stacks (one per process, say); every printer merges them.
package flame

import (
	"cmp"
	"strings"

	"github.com/binscope/binscope/stack"
)

// Annotations the usual stack collapsers append to frame names in the
// folded format.
const (
	kernelSuffix = "_[k]"
	inlineSuffix = "_[i]"
	kernelModule = "[kernel]"
)

// nameCleaner keeps names printable on one line and free of the folded
// format's frame separator.
var nameCleaner = strings.NewReplacer(";", ":", "\n", " ", "\r", " ", "\t", " ")

// cleanName is name as every printer shows it: one line, no ';'.
func cleanName(name string) string {
	if strings.ContainsAny(name, ";\n\r\t") {
		return nameCleaner.Replace(name)
	}
	return name
}

// compareFrames orders frames by name first (the flame graph's sibling
// order), then by every other field, so that frames compare equal only
// when they are equal.
func compareFrames(a, b *stack.Frame) int {
	if a.Name != b.Name {
		return strings.Compare(a.Name, b.Name)
	}
	if a.Module != b.Module {
		return strings.Compare(a.Module, b.Module)
	}
	if c := cmp.Compare(a.Lang, b.Lang); c != 0 {
		return c
	}
	if c := compareBool(a.Kernel, b.Kernel); c != 0 {
		return c
	}
	return compareBool(a.Inlined, b.Inlined)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareStacks orders frame lists lexicographically, a list before the
// lists it is a prefix of: sorted this way, all stacks that share a prefix
// are adjacent, which is what merging frames along the path needs.
func compareStacks(a, b []stack.Frame) int {
	for i := range min(len(a), len(b)) {
		if c := compareFrames(&a[i], &b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// commonPrefix is how many leading frames a and b share.
func commonPrefix(a, b []stack.Frame) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

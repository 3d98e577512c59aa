//go:build !linux

package cli

import "io"

// isTerminal reports false off Linux.
func isTerminal(io.Writer) bool { return false }

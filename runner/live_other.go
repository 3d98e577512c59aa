//go:build !linux

package runner

import "io"

// isTerminal reports false off Linux.
func isTerminal(io.Writer) bool { return false }

// liveLine is the status line, which off Linux is never shown.
type liveLine struct{}

func startLive(io.Writer) *liveLine { return nil }
func (l *liveLine) show(string)     {}
func (l *liveLine) stop()           {}

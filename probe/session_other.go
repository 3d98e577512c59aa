//go:build !linux

package probe

import (
	"errors"
	"os/exec"
	"time"

	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/stack"
)

// ErrNotSupported is returned where uprobes do not exist.
var ErrNotSupported = errors.New("probing needs Linux uprobes")

// ErrPermission is returned when the kernel refuses to load or attach.
var ErrPermission = errors.New("loading BPF programs needs root, or CAP_BPF and CAP_PERFMON")

// Session is not available off Linux.
type Session struct{ Spec *Spec }

// Attach returns ErrNotSupported off Linux.
func Attach(s *Spec, target string, opts *AttachOptions) (*Session, error) {
	return nil, ErrNotSupported
}

// Read returns ErrNotSupported off Linux.
func (s *Session) Read(time.Time) (*Event, error) { return nil, ErrNotSupported }

// Wake does nothing off Linux.
func (s *Session) Wake() {}

// Counts returns ErrNotSupported off Linux.
func (s *Session) Counts() ([]uint64, uint64, error) { return nil, 0, ErrNotSupported }

// Misses returns nil off Linux.
func (s *Session) Misses() []uint64 { return nil }

// Close does nothing off Linux.
func (s *Session) Close() {}

// AttachHist returns ErrNotSupported off Linux.
func AttachHist(s *Spec, target string, opts *AttachOptions) (*Session, error) {
	return nil, ErrNotSupported
}

// SetRoot returns ErrNotSupported off Linux.
func (s *Session) SetRoot(int) error { return ErrNotSupported }

// Descendants returns nothing off Linux.
func (s *Session) Descendants() []int { return nil }

// KernelTaskOffsets returns ErrNotSupported off Linux.
func KernelTaskOffsets() (TaskOffsets, error) { return TaskOffsets{}, ErrNotSupported }

// Hist returns ErrNotSupported off Linux.
func (s *Session) Hist() ([]*HistEntry, error) { return nil, ErrNotSupported }

// Profile is not available off Linux.
type Profile struct{ BytesRead uint64 }

// StartProfile returns ErrNotSupported off Linux.
func StartProfile(*stack.Tables, *ProfileOptions) (*Profile, error) { return nil, ErrNotSupported }

// HostArch returns ErrNotSupported off Linux.
func HostArch() (*arch.Arch, error) { return nil, ErrNotSupported }

// AddProcess returns ErrNotSupported off Linux.
func (p *Profile) AddProcess(int) error { return ErrNotSupported }

// SetRoot returns ErrNotSupported off Linux.
func (p *Profile) SetRoot(int) error { return ErrNotSupported }

// Refresh does nothing off Linux.
func (p *Profile) Refresh() {}

// Counters returns zeros off Linux.
func (p *Profile) Counters() []uint64 { return make([]uint64, unwindCounters) }

// Stop does nothing off Linux.
func (p *Profile) Stop() {}

// Close does nothing off Linux.
func (p *Profile) Close() {}

// UserFrames returns nothing off Linux.
func (p *Profile) UserFrames(*stack.Symbolizer, int, []uint64) []flame.Frame { return nil }

// Stacks returns ErrNotSupported off Linux.
func (p *Profile) Stacks(*stack.Symbolizer) ([]flame.Stack, error) { return nil, ErrNotSupported }

// Stacks returns ErrNotSupported off Linux.
func (s *Session) Stacks(*stack.Symbolizer) (map[int][]flame.Stack, error) {
	return nil, ErrNotSupported
}

// StackCounters returns zeros off Linux.
func (s *Session) StackCounters() []uint64 { return make([]uint64, unwindCounters) }

// AddProcess returns ErrNotSupported off Linux.
func (s *Session) AddProcess(int) error { return ErrNotSupported }

// UserFrames returns nothing off Linux.
func (s *Session) UserFrames(*stack.Symbolizer, int, []uint64) []flame.Frame { return nil }

// StartGated starts cmd and calls the hooks at once off Linux.
func StartGated(cmd *exec.Cmd, h GateHooks) (*exec.Cmd, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if h.Exec != nil {
		h.Exec(cmd.Process.Pid)
	}
	if h.Loaded != nil {
		h.Loaded(cmd.Process.Pid)
	}
	return cmd, nil
}

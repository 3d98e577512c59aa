//go:build !linux

package probe

import (
	"errors"
	"time"
)

// ErrNotSupported is returned where uprobes do not exist.
var ErrNotSupported = errors.New("probing needs Linux uprobes")

// ErrPermission is returned when the kernel refuses to load or attach.
var ErrPermission = errors.New("loading BPF programs needs root, or CAP_BPF and CAP_PERFMON")

// Session is not available off Linux.
type Session struct{ Spec *Spec }

// Attach returns ErrNotSupported off Linux.
func Attach(s *Spec, target string, pid int) (*Session, error) { return nil, ErrNotSupported }

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
func AttachHist(s *Spec, target string, pid int) (*Session, error) { return nil, ErrNotSupported }

// Hist returns ErrNotSupported off Linux.
func (s *Session) Hist() ([]*HistEntry, error) { return nil, ErrNotSupported }

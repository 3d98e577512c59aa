//go:build !linux

package runner

import (
	"os/exec"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
)

// host is a kernel without uprobes: nothing attaches, and a command
// starts without the exec gate.
type host struct{}

func (host) Attach(*spec.Spec, string, *attach.Options) (Probes, error) {
	return nil, attach.ErrNotSupported
}

func (host) AttachHist(*spec.Spec, string, *attach.Options) (Probes, error) {
	return nil, attach.ErrNotSupported
}

func (host) Start(c *exec.Cmd, h attach.GateHooks) (*exec.Cmd, error) {
	return nil, attach.ErrNotSupported
}

func (host) StartProfile(*stack.Tables, *bpfprog.ProfileOptions) (Profiler, error) {
	return nil, attach.ErrNotSupported
}

func (host) TaskOffsets() (bpfprog.TaskOffsets, error) {
	return bpfprog.TaskOffsets{}, attach.ErrNotSupported
}

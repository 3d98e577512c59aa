package runner

import (
	"os/exec"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
)

// host is the running kernel, through package attach.
type host struct{}

func (host) Attach(s *spec.Spec, target string, o *attach.Options) (Probes, error) {
	return nilable(attach.Probes(s, target, o))
}

func (host) AttachHist(s *spec.Spec, target string, o *attach.Options) (Probes, error) {
	return nilable(attach.Hist(s, target, o))
}

// nilable keeps a nil *attach.Session from becoming a non-nil Probes.
func nilable(s *attach.Session, err error) (Probes, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (host) Start(c *exec.Cmd, h attach.GateHooks) (*exec.Cmd, error) {
	return attach.StartGated(c, h)
}

func (host) StartProfile(tables *stack.Tables, o *bpfprog.ProfileOptions) (Profiler, error) {
	p, err := attach.StartProfile(tables, o)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (host) TaskOffsets() (bpfprog.TaskOffsets, error) { return attach.KernelTaskOffsets() }

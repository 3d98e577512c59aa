// Package session runs goprobe's probes: it picks the file to probe (-x,
// the command's binary, the process's executable or the first library the
// process maps that has the functions), resolves the definitions or reads
// a spec, attaches, runs the command or waits for the process, reads the
// events of every attachment (the first, and one more each time the probed
// file is replaced on disk), names the command to the descendant filter at
// its exec, feeds the stack unwinder the mappings of the command and its
// descendants, and ends with the command's exit status. It also runs the
// in-kernel histograms, the CPU profiler and the metrics agent.
//
// The kernel side (attaching programs, starting the command under the
// exec gate) is behind Kernel, so the orchestration runs with fakes in
// tests without root; Host is the real one.
package session

import (
	"errors"
	"os/exec"
	"time"

	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
)

// Kernel is what a run needs of the kernel.
type Kernel interface {
	// Attach loads the programs of spec and attaches them to target
	// (probe.Attach); AttachHist the in-kernel aggregation's
	// (probe.AttachHist).
	Attach(spec *probe.Spec, target string, o *probe.AttachOptions) (Probes, error)
	AttachHist(spec *probe.Spec, target string, o *probe.AttachOptions) (Probes, error)
	// Start starts c stopped at its exec and calls the hooks as
	// probe.StartGated does; an *probe.EndedError says the command ended
	// before its entry point.
	Start(c *exec.Cmd, h probe.GateHooks) (*exec.Cmd, error)
}

// Probes is one attachment: its programs' events and counters
// (*probe.Session).
type Probes interface {
	Read(deadline time.Time) (*probe.Event, error)
	Wake()
	Counts() (hits []uint64, dropped uint64, err error)
	Misses() []uint64
	Hist() ([]*probe.HistEntry, error)
	// SetRoot names the process whose descendants the programs see.
	SetRoot(pid int) error
	// Descendants are the processes under the root the programs met.
	Descendants() []int
	// AddProcess gives the unwinder process pid's mappings.
	AddProcess(pid int) error
	StackCounters() []uint64
	Stacks(sym *stack.Symbolizer) (map[int][]flame.Stack, error)
	UserFrames(sym *stack.Symbolizer, pid int, ips []uint64) []flame.Frame
	Close()
}

// Host is the running kernel (probe's attach and exec gate; off Linux,
// probe.ErrNotSupported).
var Host Kernel = host{}

type host struct{}

func (host) Attach(s *probe.Spec, target string, o *probe.AttachOptions) (Probes, error) {
	sess, err := probe.Attach(s, target, o)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

func (host) AttachHist(s *probe.Spec, target string, o *probe.AttachOptions) (Probes, error) {
	sess, err := probe.AttachHist(s, target, o)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

func (host) Start(c *exec.Cmd, h probe.GateHooks) (*exec.Cmd, error) {
	return probe.StartGated(c, h)
}

// usageError is a command line a run cannot serve: exit status 2.
type usageError struct{ error }

func (usageError) Usage() bool { return true }

func usage(msg string) error { return usageError{errors.New(msg)} }

// Package runner is goprobe's runtime, the one that runs its probes: it
// picks the file to probe (-x, the command's binary, the process's
// executable or the first library the process maps that has the
// functions), resolves the definitions or reads a spec, attaches, runs the
// command or waits for the process, reads the events of every attachment
// (the first, and one more each time the probed file is replaced on disk),
// names the command to the descendant filter at its exec, feeds the stack
// unwinder the mappings of the command and its descendants, and ends with
// the command's exit status. It also runs the in-kernel histograms, the
// CPU profiler and the metrics agent.
//
// The kernel side (package attach: attaching programs, sampling the CPUs,
// starting the command under the exec gate) is behind Kernel, so the
// orchestration of traces, histograms and profiles runs with fakes in
// tests without root; Host is the real one, and the only code here built
// for Linux alone (host_linux.go; elsewhere it returns
// attach.ErrNotSupported).
package runner

import (
	"os/exec"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// Kernel is what a run needs of the kernel.
type Kernel interface {
	// Attach loads the programs of spec and attaches them to target
	// (attach.Probes); AttachHist the in-kernel aggregation's
	// (attach.Hist).
	Attach(spec *spec.Spec, target string, o *attach.Options) (Probes, error)
	AttachHist(spec *spec.Spec, target string, o *attach.Options) (Probes, error)
	// Start starts c stopped at its exec and calls the hooks as
	// attach.StartGated does; an *attach.EndedError says the command
	// ended before its entry point.
	Start(c *exec.Cmd, h attach.GateHooks) (*exec.Cmd, error)
	// StartProfile starts sampling every CPU with the unwinder's tables
	// (attach.StartProfile).
	StartProfile(tables *stack.Tables, o *bpfprog.ProfileOptions) (Profiler, error)
	// TaskOffsets are the running kernel's task_struct offsets the
	// descendant filter reads (attach.KernelTaskOffsets).
	TaskOffsets() (bpfprog.TaskOffsets, error)
}

// Probes is one attachment: its programs' events and counters
// (*attach.Session).
type Probes interface {
	Read(deadline time.Time) (*spec.Event, error)
	Wake()
	Counts() (hits []uint64, dropped uint64, err error)
	Misses() []uint64
	Hist() ([]*spec.HistEntry, error)
	// SetRoot names the process whose descendants the programs see.
	SetRoot(pid int) error
	// Descendants are the processes under the root the programs met.
	Descendants() []int
	// AddProcess gives the unwinder process pid's mappings.
	AddProcess(pid int) error
	StackCounters() []uint64
	Stacks(sym *stack.Symbolizer) (map[int][]stack.Stack, error)
	UserFrames(sym *stack.Symbolizer, pid int, ips []uint64) []stack.Frame
	// Detach detaches the programs; what they counted stays readable
	// until Close.
	Detach()
	Close()
}

// Profiler is a CPU profile being sampled (*attach.Profile).
type Profiler interface {
	// AddProcess samples process pid with its mappings' tables (again
	// after an exec or a dlopen); Refresh re-reads every process's.
	AddProcess(pid int) error
	Refresh()
	// SetRoot names the command whose descendants are sampled too.
	SetRoot(pid int) error
	// Stop ends sampling; the counts stay readable until Close.
	Stop()
	Close()
	// Stacks are the counted stacks named, RawStacks as the kernel
	// holds them, to be placed in Mappings(pid); Counters the
	// unwinder's (unwind.UnwindStacks...); BytesRead what Stacks copied
	// out of the kernel.
	Stacks(sym *stack.Symbolizer) ([]stack.Stack, error)
	RawStacks() ([]unwind.Raw, error)
	Mappings(pid int) []stack.Mapping
	Counters() []uint64
	BytesRead() uint64
}

// Host is the running kernel: package attach on Linux, elsewhere a kernel
// that returns attach.ErrNotSupported.
var Host Kernel = host{}

// Package attach is the Linux runtime of probes: it loads the programs of
// package bpfprog and attaches them (uprobes at each site's file offset:
// Probes, Hist), samples the CPUs with perf events (StartProfile), keeps
// the stack unwinder's tables in the kernel in step with the processes'
// mappings, and starts a command under the ptrace entry gate
// (StartGated), so that probes see it from its first instruction. Its
// functions exist on Linux only; the options, hooks and errors here are
// for every system, so that a caller can name them everywhere and keep
// its calls behind a build tag (package runner does).
package attach

import (
	"errors"

	"github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/stack"
)

// Options tune Probes and Hist. A nil *Options means the defaults.
type Options struct {
	// PID, when > 0, limits the probes to that process.
	PID int
	// Stacks adds the user stack to each hit; Tables holds the unwind
	// rows of the files the probed processes map (nil: frame pointers).
	Stacks bpfprog.StackMode
	Tables *stack.Tables
	// StackDepth bounds the frames of a stack, 1 to unwind.SiteDepth (0:
	// unwind.SiteDepth).
	StackDepth int
	// Descendants limits the probes to one process and its descendants,
	// named with Session.SetRoot once it runs (a command started after
	// attaching); until then nothing fires.
	Descendants bool
	// KernelDescendants limits tracepoint sites (which fire for every
	// process) to the root and its descendants, as Descendants does for
	// every site.
	KernelDescendants bool
	// Events makes a site without arguments send an event for each hit
	// too (trace prints one line per call; stat only counts).
	Events bool
	// Object, when set, is a BPF object compiled from goprobe gen
	// --format=bpf-c --core to run instead of the programs of package
	// bpfprog: its program pI_sJ attaches at site J of probe I, its field
	// accesses relocated against Types, the target's BTF (CO-RE).
	Object string
	Types  *btf.Spec
}

// ErrNotSupported is what a caller returns where uprobes do not exist
// (this package's functions are Linux's).
var ErrNotSupported = errors.New("probing needs Linux uprobes")

// ErrPermission is returned when the kernel refuses to load or attach.
var ErrPermission = errors.New("BPF programs and uprobes need root, or CAP_BPF with CAP_PERFMON")

// ErrNoEvents is what Session.Read returns when no probe has arguments:
// there is nothing to read, only counts.
var ErrNoEvents = errors.New("no probe records events")

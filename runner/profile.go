package runner

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// ProfileOptions say what goprobe profile samples and writes.
type ProfileOptions struct {
	// Hz is the samples per second and CPU.
	Hz int
	// PID, or the command Run, is the process profiled with unwind
	// tables; All profiles every process (frame pointers only for the
	// others).
	PID int
	Run []string
	All bool
	// Folded, SVG and Pprof are the files written, when not "".
	Folded, SVG, Pprof string
	// Top is the number of functions listed by samples on Stdout (0: none).
	Top int
	// Color is the flame graph's colouring, "lang" or "module"; Title its
	// title ("" names the command).
	Color, Title string
	// Stdout and Stderr are the command's, and the run's.
	Stdout, Stderr io.Writer
	// Kernel samples and starts the command; nil means Host.
	Kernel Kernel
}

// Profile samples the CPUs Hz times a second and unwinds each sample's
// user stack in the kernel with tables compiled from each mapped file's
// call frame information; at the end (the command exits, the process
// ends, or SIGINT) it names the frames and writes the outputs. It
// returns the command's exit status. Errors: a usage error for options
// that do not go together; the kernel's.
func Profile(o *ProfileOptions) (int, error) {
	if o.PID > 0 && len(o.Run) > 0 || o.PID == 0 && len(o.Run) == 0 && !o.All {
		return 0, usage.Errorf("name a process with -p, a command after --, or profile every process with -a")
	}
	if o.Color != "lang" && o.Color != "module" {
		return 0, usage.Errorf("--color %q: want lang or module", o.Color)
	}
	tables, err := unwindTables(o.PID, o.Run, "")
	if err != nil {
		return 0, err
	}
	po := &bpfprog.ProfileOptions{Hz: o.Hz, All: o.All && o.PID == 0 && len(o.Run) == 0}
	if len(o.Run) > 0 {
		// A command's children (a shell's, a build's) are its work too.
		if off, err := o.kernel().TaskOffsets(); err == nil {
			po.Descendants = &off
		}
	}
	prof, err := o.kernel().StartProfile(tables, po)
	if err != nil {
		return 0, err
	}
	defer prof.Close()
	if o.PID > 0 {
		if err := prof.AddProcess(o.PID); err != nil {
			return 0, fmt.Errorf("process %d: %v", o.PID, err)
		}
	}
	for path, why := range tables.Failed {
		fmt.Fprintf(o.Stderr, "goprobe: %s: no unwind table (%s): frame pointers only\n", path, why)
	}
	start := time.Now()
	status, err := o.sample(prof)
	if err != nil {
		return 0, err
	}
	prof.Stop()
	return status, o.write(prof, start, time.Since(start))
}

func (o *ProfileOptions) kernel() Kernel {
	if o.Kernel == nil {
		return Host
	}
	return o.Kernel
}

// sample runs the command or waits for the process (or SIGINT), keeping
// the unwinder's view of the mappings current: an exec or a dlopen
// changes them.
func (o *ProfileOptions) sample(prof Profiler) (int, error) {
	target := o.PID
	refresh := func() bool {
		prof.Refresh()
		if target > 0 {
			return alive(target)
		}
		return true
	}
	ro := &Options{Run: o.Run, Stdout: o.Stdout, Stderr: o.Stderr, Kernel: o.Kernel}
	return ro.runOrWait(runOptions{every: 20 * time.Millisecond, tick: refresh, gate: &attach.GateHooks{
		Exec: func(pid int) {
			target = pid
			prof.SetRoot(pid)
			prof.AddProcess(pid)
		},
		Loaded: func(pid int) { prof.AddProcess(pid) },
	}})
}

// write names the sampled stacks and writes the summary, the files and
// the top table.
func (o *ProfileOptions) write(prof Profiler, start time.Time, elapsed time.Duration) error {
	sym := stack.NewSymbolizer()
	stacks, err := prof.Stacks(sym)
	if err != nil {
		return err
	}
	c := prof.Counters()
	var samples uint64
	for _, s := range stacks {
		samples += s.Count
	}
	perSample := 0.0
	if samples > 0 {
		perSample = float64(prof.BytesRead()) / float64(samples)
	}
	fmt.Fprintf(o.Stderr, "goprobe: %d samples in %.1fs, %d distinct stacks, %d bytes read from the kernel (%.0f per sample); %d truncated at %d frames, %d lookups failed, %d frames without a table (frame pointer) in %d stacks, %d stacks the map had no room for\n",
		samples, elapsed.Seconds(), len(stacks), prof.BytesRead(), perSample, c[unwind.UnwindTruncated], unwind.Depth, c[unwind.UnwindFailed], c[unwind.UnwindNoTable], c[unwind.UnwindNoTableStacks], c[unwind.UnwindMapFull])
	if o.Folded != "" {
		if err := writeFile(o.Folded, func(w io.Writer) error { return flame.WriteFolded(w, stacks) }); err != nil {
			return err
		}
	}
	if o.Pprof != "" {
		if err := writePprof(o.Pprof, prof, sym, o.Hz, start, elapsed); err != nil {
			return err
		}
	}
	if o.SVG != "" {
		title := o.Title
		if title == "" {
			title = "goprobe profile"
			if len(o.Run) > 0 {
				title += ": " + filepath.Base(o.Run[0])
			}
		}
		if err := writeFile(o.SVG, func(w io.Writer) error {
			return flame.WriteSVG(w, stacks, &flame.SVGOptions{Title: title, ColorBy: o.Color})
		}); err != nil {
			return err
		}
	}
	if o.Top > 0 {
		w := bufio.NewWriter(o.Stdout)
		flame.WriteTop(w, flame.Top(stacks, o.Top), samples)
		w.Flush()
	}
	return nil
}

// writeFile writes path through a buffered writer.
func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(fh)
	if err := write(w); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return fh.Close()
}

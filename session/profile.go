package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
)

type profileFlags struct {
	hz     int
	pid    int
	all    bool
	folded string
	svg    string
	pprof  string
	top    int
	color  string
	title  string
}

func profileCommand(stdout, stderr io.Writer) *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile [-F HZ] [-p PID | -a | -- CMD ARGS...] [--folded FILE] [--svg FILE] [--pprof FILE]",
		Short: "Sample CPU stacks, unwound in the kernel from each binary's call frame information, into a flame graph",
		Long: `profile samples the CPUs HZ times a second and, in the BPF program, unwinds
the sampled process's user stack with tables compiled from each mapped file's
.eh_frame or .debug_frame (so code without frame pointers unwinds too) and its
kernel stack; identical stacks are counted in the kernel. At the end (the
command exits, or SIGINT) frames are named from DWARF with their inline
expansions, or from .gopclntab and symbols, and printed as a top-N table, a
folded file (--folded) and an interactive SVG flame graph (--svg).`,
		Example: `  goprobe profile --svg app.svg -- ./app
  goprobe profile -F 999 -p 1234 --folded app.folded
  goprobe profile -a --svg all.svg   (every process, until SIGINT)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var run []string
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				if d > 0 {
					return usageError{fmt.Errorf("unexpected arguments before --: %v", args[:d])}
				}
				run = args
			} else if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected arguments %v (the command goes after --)", args)}
			}
			return runProfile(&f, run, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.hz, "freq", "F", 99, "samples per second and CPU")
	fl.IntVarP(&f.pid, "pid", "p", 0, "profile this process")
	fl.BoolVarP(&f.all, "all", "a", false, "profile every process (frame pointers only for processes not named)")
	fl.StringVar(&f.folded, "folded", "", "write the stacks in the folded format (main;outer;inner 123) to FILE")
	fl.StringVar(&f.svg, "svg", "", "write an interactive flame graph to FILE")
	fl.StringVar(&f.pprof, "pprof", "", "write the profile as pprof's protobuf to FILE (go tool pprof FILE)")
	fl.IntVar(&f.top, "top", 15, "functions to list by samples (0: none)")
	fl.StringVar(&f.color, "color", "lang", "flame graph colours by lang or module")
	fl.StringVar(&f.title, "title", "", "flame graph title")
	return cmd
}

func runProfile(f *profileFlags, run []string, stdout, stderr io.Writer) error {
	if f.pid > 0 && len(run) > 0 || f.pid == 0 && len(run) == 0 && !f.all {
		return usageError{errors.New("name a process with -p, a command after --, or profile every process with -a")}
	}
	if f.color != "lang" && f.color != "module" {
		return usageError{fmt.Errorf("--color %q: want lang or module", f.color)}
	}
	a, err := probe.HostArch()
	if err != nil {
		return err
	}
	// Tables for the files the process maps, compiled before sampling
	// starts: the kernel's table is sized once.
	tables := stack.NewTables(a)
	switch {
	case f.pid > 0:
		ms, err := stack.ProcMappings(f.pid)
		if err != nil {
			return processError(f.pid, err)
		}
		for _, m := range ms {
			tables.Add(m.Path)
		}
	case len(run) > 0:
		path, err := exec.LookPath(run[0])
		if err != nil {
			return fmt.Errorf("%s: %v", run[0], err)
		}
		for _, p := range stack.LoadedFiles(path) {
			tables.Add(p)
		}
	}
	po := &probe.ProfileOptions{Hz: f.hz, All: f.all && f.pid == 0 && len(run) == 0}
	if len(run) > 0 {
		// A command's children (a shell's, a build's) are its work too.
		if off, err := probe.KernelTaskOffsets(); err == nil {
			po.Descendants = &off
		}
	}
	prof, err := probe.StartProfile(tables, po)
	if err != nil {
		return err
	}
	defer prof.Close()
	target := f.pid
	if target > 0 {
		if err := prof.AddProcess(target); err != nil {
			return fmt.Errorf("process %d: %v", target, err)
		}
	}
	for path, why := range tables.Failed {
		fmt.Fprintf(stderr, "goprobe: %s: no unwind table (%s): frame pointers only\n", path, why)
	}
	start := time.Now()
	refresh := func() bool {
		prof.Refresh() // an exec or a dlopen changes the mappings
		if target > 0 {
			return alive(target)
		}
		return true
	}
	status, err := runOrWait(run, stdout, stderr, runOptions{every: 20 * time.Millisecond, tick: refresh, gate: &probe.GateHooks{
		Exec: func(pid int) {
			target = pid
			prof.SetRoot(pid)
			prof.AddProcess(pid)
		},
		Loaded: func(pid int) { prof.AddProcess(pid) },
	}})
	if err != nil {
		return err
	}
	prof.Stop()
	elapsed := time.Since(start)
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
		perSample = float64(prof.BytesRead) / float64(samples)
	}
	fmt.Fprintf(stderr, "goprobe: %d samples in %.1fs, %d distinct stacks, %d bytes read from the kernel (%.0f per sample); %d truncated at %d frames, %d lookups failed, %d frames without a table (frame pointer) in %d stacks, %d stacks the map had no room for\n",
		samples, elapsed.Seconds(), len(stacks), prof.BytesRead, perSample, c[probe.UnwindTruncated], stack.Depth, c[probe.UnwindFailed], c[probe.UnwindNoTable], c[probe.UnwindNoTableStacks], c[probe.UnwindMapFull])
	if f.folded != "" {
		if err := writeFile(f.folded, func(w io.Writer) error { return flame.WriteFolded(w, stacks) }); err != nil {
			return err
		}
	}
	if f.pprof != "" {
		if err := writePprof(f.pprof, prof, sym, f.hz, start, elapsed); err != nil {
			return err
		}
	}
	if f.svg != "" {
		title := f.title
		if title == "" {
			title = "goprobe profile"
			if len(run) > 0 {
				title += ": " + filepath.Base(run[0])
			}
		}
		if err := writeFile(f.svg, func(w io.Writer) error {
			return flame.WriteSVG(w, stacks, &flame.SVGOptions{Title: title, ColorBy: f.color})
		}); err != nil {
			return err
		}
	}
	if f.top > 0 {
		w := bufio.NewWriter(stdout)
		flame.WriteTop(w, flame.Top(stacks, f.top), samples)
		w.Flush()
	}
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
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

package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"

	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// unwindTables compiles, before the probes or the profiler start (the
// kernel's table is sized once), the unwind tables of the files process
// pid maps, or else of those the command run will map (its binary and
// the libraries it loads), or else of target and its libraries when it
// is not "". Other processes unwind by frame pointer.
func unwindTables(pid int, run []string, target string) (*stack.Tables, error) {
	a, err := arch.ForName(arch.HostName())
	if err != nil {
		return nil, err
	}
	tables := stack.NewTables(a)
	switch {
	case pid > 0:
		ms, err := stack.ProcMappings(pid)
		if err != nil {
			return nil, processError(pid, err)
		}
		for _, m := range ms {
			tables.Add(m.Readable())
		}
		return tables, nil
	case len(run) > 0:
		path, err := exec.LookPath(run[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", run[0], err)
		}
		target = path
	}
	if target != "" {
		for _, p := range stack.LoadedFiles(target) {
			tables.Add(p)
		}
	}
	return tables, nil
}

// frameNames lists frames innermost first, as stack traces read.
func frameNames(frames []stack.Frame) []string {
	out := make([]string, 0, len(frames))
	for i := len(frames) - 1; i >= 0; i-- {
		out = append(out, frames[i].Name)
	}
	return out
}

// Stack formats of trace --stack-format.
const (
	StackNames   = "names"    // the functions (with inline expansions)
	StackLines   = "lines"    // the functions and their source file:line
	StackRaw     = "raw"      // the addresses in the process
	StackBuildID = "build-id" // the module's build-id and the address's file offset
)

// checkStack checks --stack-depth and --stack-format.
func (o *TraceOptions) checkStack() error {
	if o.StackDepth != 0 && !o.Stack && !o.Stacks {
		return usage.Errorf("--stack-depth needs --stack (trace) or --stacks (stat)")
	}
	if o.StackDepth < 0 || o.StackDepth > unwind.SiteDepth {
		return usage.Errorf("--stack-depth %d: want 1 to %d", o.StackDepth, unwind.SiteDepth)
	}
	switch o.StackFormat {
	case "", StackNames:
		return nil
	case StackLines, StackRaw, StackBuildID:
		if !o.Stack {
			return usage.Errorf("--stack-format needs --stack")
		}
		return nil
	}
	return usage.Errorf("--stack-format %q: want %s, %s, %s or %s", o.StackFormat, StackNames, StackLines, StackRaw, StackBuildID)
}

// stackFrames are the frames (root first) a format prints, innermost
// first: every frame, or for raw and build-id one per address (the
// frames of its inline expansions share it).
func stackFrames(frames []stack.Frame, format string) []stack.Frame {
	perAddr := format == StackRaw || format == StackBuildID
	out := make([]stack.Frame, 0, len(frames))
	for i := len(frames) - 1; i >= 0; i-- {
		if perAddr && frames[i].Inlined {
			continue
		}
		out = append(out, frames[i])
	}
	return out
}

// stackLines formats frames (root first), innermost first.
func stackLines(frames []stack.Frame, format string) []string {
	fs := stackFrames(frames, format)
	out := make([]string, len(fs))
	for i, f := range fs {
		switch format {
		case StackLines:
			if f.Line > 0 {
				out[i] = fmt.Sprintf("%s %s:%d", f.Name, f.File, f.Line)
			} else {
				out[i] = f.Name + " ??:?"
			}
		case StackRaw:
			out[i] = fmt.Sprintf("%#x", f.Addr)
		case StackBuildID:
			id := f.BuildID
			if id == "" {
				id = f.Module
			}
			out[i] = fmt.Sprintf("%s+%#x", id, f.Offset)
		default:
			out[i] = f.Name
		}
	}
	return out
}

// stackModules are the modules of stackLines' frames.
func stackModules(frames []stack.Frame, format string) []string {
	var out []string
	for _, f := range stackFrames(frames, format) {
		out = append(out, f.Module)
	}
	return out
}

// withStack adds "stack" (innermost first, as formatted) to an event's
// JSON object.
func withStack(b []byte, lines []string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	s, _ := jsonx.Marshal(lines)
	m["stack"] = s
	out, err := jsonx.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

type jstack struct {
	Count  uint64   `json:"count"`
	Frames []string `json:"frames"`
}

type jprobe struct {
	statRow
	Stacks []jstack `json:"stacks"`
}

// writeStatStacks prints stat --stacks: each probe's count, then its
// stacks by count, innermost frame first; or the same as JSON; and the
// folded stacks (each under its probe's name) to --folded.
func (t *tracer) writeStatStacks(hits, misses []uint64, dropped uint64) error {
	byProbe, err := t.ss.stacks(t.sym)
	if err != nil {
		return err
	}
	counters := t.ss.stackCounters()
	var rows []jprobe
	var all []stack.Stack
	for i, r := range statRows(t.spec, hits, misses) {
		st := byProbe[i]
		sort.SliceStable(st, func(a, b int) bool { return st[a].Count > st[b].Count })
		row := jprobe{statRow: r, Stacks: []jstack{}}
		for _, s := range st {
			row.Stacks = append(row.Stacks, jstack{s.Count, frameNames(s.Frames)})
			all = append(all, stack.Stack{Frames: append([]stack.Frame{{Name: r.Probe}}, s.Frames...), Count: s.Count})
		}
		rows = append(rows, row)
	}
	if t.o.Folded != "" {
		if err := writeFile(t.o.Folded, func(w io.Writer) error { return flame.WriteFolded(w, all) }); err != nil {
			return err
		}
	}
	if t.o.JSON {
		b, _ := jsonx.Marshal(struct {
			Probes    []jprobe `json:"probes"`
			Dropped   uint64   `json:"dropped"`
			Truncated uint64   `json:"truncated"`
			// Stacks with frames in code no unwind table covers, and
			// those frames.
			NoTable       uint64 `json:"no_table"`
			NoTableFrames uint64 `json:"no_table_frames"`
		}{rows, dropped, counters[unwind.UnwindTruncated], counters[unwind.UnwindNoTableStacks], counters[unwind.UnwindNoTable]})
		_, err := t.out.Write(append(b, '\n'))
		return err
	}
	writeStacks(t.out, rows, counters, t.o.StackDepth)
	return nil
}

func writeStacks(w io.Writer, rows []jprobe, counters []uint64, depth int) {
	for _, r := range rows {
		fmt.Fprintf(w, "%s: %d hits, %d stacks\n", r.Probe, r.Count, len(r.Stacks))
		for _, s := range r.Stacks {
			fmt.Fprintf(w, "%10d", s.Count)
			for k, name := range s.Frames {
				if k == 0 {
					fmt.Fprintf(w, "  %s\n", name)
				} else {
					fmt.Fprintf(w, "%10s  %s\n", "", name)
				}
			}
		}
	}
	if n := truncatedNote(counters, depth); n != "" {
		fmt.Fprintln(w, n)
	}
	if n := noTableNote(counters); n != "" {
		fmt.Fprintln(w, n)
	}
}

// truncatedNote says how many stacks had more frames than a site unwinds,
// or nothing when none had.
func truncatedNote(c []uint64, depth int) string {
	if len(c) <= unwind.UnwindTruncated || c[unwind.UnwindTruncated] == 0 {
		return ""
	}
	if depth <= 0 {
		depth = unwind.SiteDepth
	}
	return fmt.Sprintf("%d stacks truncated at %d frames", c[unwind.UnwindTruncated], depth)
}

// noTableNote says how many stacks went through code no unwind table
// covered (unwound by frame pointer, so a caller may be missing), or
// nothing when none did.
func noTableNote(c []uint64) string {
	if len(c) <= unwind.UnwindNoTableStacks || c[unwind.UnwindNoTableStacks] == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d stacks had frames without an unwind table (%d frames, followed by frame pointer: callers may be missing)",
		c[unwind.UnwindNoTableStacks], c[unwind.UnwindStacks], c[unwind.UnwindNoTable])
}

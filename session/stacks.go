package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"

	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
)

// stackOptions are the attach options of trace --stack and stat --stacks:
// unwind tables for the files the probed process maps (-p), or will map
// (-- CMD); other processes unwind by frame pointer.
func stackOptions(f *traceFlags, target string, run []string) (*probe.AttachOptions, error) {
	o := &probe.AttachOptions{PID: f.pid}
	switch {
	case f.stack:
		o.Stacks = probe.EventStacks
	case f.stacks:
		o.Stacks = probe.CountStacks
	default:
		return o, nil
	}
	a, err := probe.HostArch()
	if err != nil {
		return nil, err
	}
	o.Tables = stack.NewTables(a)
	switch {
	case f.pid > 0:
		ms, err := stack.ProcMappings(f.pid)
		if err != nil {
			return nil, processError(f.pid, err)
		}
		for _, m := range ms {
			o.Tables.Add(m.Path)
		}
	case len(run) > 0:
		path, err := exec.LookPath(run[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", run[0], err)
		}
		for _, p := range stack.LoadedFiles(path) {
			o.Tables.Add(p)
		}
	default:
		for _, p := range stack.LoadedFiles(target) {
			o.Tables.Add(p)
		}
	}
	return o, nil
}

// frameNames lists frames innermost first, as stack traces read.
func frameNames(frames []flame.Frame) []string {
	out := make([]string, 0, len(frames))
	for i := len(frames) - 1; i >= 0; i-- {
		out = append(out, frames[i].Name)
	}
	return out
}

// withStack adds "stack" (innermost first) to an event's JSON object.
func withStack(b []byte, frames []flame.Frame) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	s, _ := jsonx.Marshal(frameNames(frames))
	m["stack"] = s
	out, err := jsonx.Marshal(m)
	if err != nil {
		return b
	}
	return out
}

// writeStatStacks prints stat --stacks: each probe's count, then its
// stacks by count, innermost frame first; or the same as JSON; and the
// folded stacks (each under its probe's name) to --folded.
func writeStatStacks(w io.Writer, ss *sessions, sym *stack.Symbolizer, spec *probe.Spec, hits, misses []uint64, dropped uint64, f *traceFlags) error {
	byProbe := map[int][]flame.Stack{}
	ss.mu.Lock()
	for _, sess := range ss.all {
		st, err := sess.Stacks(sym)
		if err != nil {
			ss.mu.Unlock()
			return err
		}
		for i, s := range st {
			byProbe[i] = append(byProbe[i], s...)
		}
	}
	ss.mu.Unlock()
	counters := ss.stackCounters()
	type jstack struct {
		Count  uint64   `json:"count"`
		Frames []string `json:"frames"`
	}
	type jprobe struct {
		Probe  string   `json:"probe"`
		Count  uint64   `json:"count"`
		Sites  int      `json:"sites"`
		Missed uint64   `json:"missed"`
		Stacks []jstack `json:"stacks"`
	}
	var rows []jprobe
	var all []flame.Stack
	for i, p := range spec.Probes {
		st := byProbe[i]
		sort.SliceStable(st, func(a, b int) bool { return st[a].Count > st[b].Count })
		r := jprobe{Probe: p.Def, Count: hits[i], Sites: len(p.Sites), Stacks: []jstack{}}
		if i < len(misses) {
			r.Missed = misses[i]
		}
		for _, s := range st {
			r.Stacks = append(r.Stacks, jstack{s.Count, frameNames(s.Frames)})
			all = append(all, flame.Stack{Frames: append([]flame.Frame{{Name: p.Def}}, s.Frames...), Count: s.Count})
		}
		rows = append(rows, r)
	}
	if f.folded != "" {
		if err := writeFile(f.folded, func(w io.Writer) error { return flame.WriteFolded(w, all) }); err != nil {
			return err
		}
	}
	if f.json {
		b, _ := jsonx.Marshal(struct {
			Probes    []jprobe `json:"probes"`
			Dropped   uint64   `json:"dropped"`
			Truncated uint64   `json:"truncated"`
			// Stacks with frames in code no unwind table covers, and
			// those frames.
			NoTable       uint64 `json:"no_table"`
			NoTableFrames uint64 `json:"no_table_frames"`
		}{rows, dropped, counters[probe.UnwindTruncated], counters[probe.UnwindNoTableStacks], counters[probe.UnwindNoTable]})
		_, err := w.Write(append(b, '\n'))
		return err
	}
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
	if counters[probe.UnwindTruncated] > 0 {
		fmt.Fprintf(w, "%d stacks truncated at %d frames\n", counters[probe.UnwindTruncated], stack.Depth)
	}
	if n := noTableNote(counters); n != "" {
		fmt.Fprintln(w, n)
	}
	return nil
}

// noTableNote says how many stacks went through code no unwind table
// covered (unwound by frame pointer, so a caller may be missing), or
// nothing when none did.
func noTableNote(c []uint64) string {
	if c[probe.UnwindNoTableStacks] == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d stacks had frames without an unwind table (%d frames, followed by frame pointer: callers may be missing)",
		c[probe.UnwindNoTableStacks], c[probe.UnwindStacks], c[probe.UnwindNoTable])
}

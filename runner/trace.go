package runner

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/internal/table"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
)

// TraceOptions say what goprobe trace and stat do and print.
type TraceOptions struct {
	Options
	// Stat counts the hits and prints the counts at exit (goprobe stat);
	// else each hit is a line with its arguments (goprobe trace).
	Stat bool
	// JSON prints JSON lines (trace) or one JSON object (stat).
	JSON bool
	// Stack adds the user stack, unwound in the kernel, to each event
	// (trace --stack); Stacks counts the hits per distinct stack (stat
	// --stacks), written also as folded stacks to Folded when not "".
	Stack  bool
	Stacks bool
	Folded string
	// StackDepth bounds the frames of a stack, 1 to unwind.SiteDepth (0:
	// unwind.SiteDepth, perf's default 127); StackFormat is how trace
	// prints them (StackNames, StackLines, StackRaw, StackBuildID; "":
	// names).
	StackDepth  int
	StackFormat string
	// Metrics, when its Listen is set, serves the counts as Prometheus
	// metrics while the run lasts (stat --listen).
	Metrics *MetricOptions
	// Interval, when > 0, prints stat's counts at that interval too.
	Interval time.Duration
	// Object, when its Object is set, runs a compiled CO-RE program.
	Object ObjectOptions
}

// Trace attaches the probes, runs the command (or waits for the process,
// or for SIGINT or SIGTERM), re-attaches when the probed file is replaced
// on disk, prints each event or, at the end, the counts, and returns the
// command's exit status. Errors: a usage error for options that do not go
// together, the resolver's, the kernel's (attach.ErrPermission).
func Trace(o *TraceOptions) (status int, err error) {
	if o.Folded != "" && !o.Stacks {
		return 0, usage.Errorf("--folded needs --stacks")
	}
	if err := o.checkStack(); err != nil {
		return 0, err
	}
	if err := o.Metrics.check(max(len(o.Defs), 1)); err != nil {
		return 0, err
	}
	t, err := o.attach()
	if err != nil {
		return 0, err
	}
	t.stop = newStopper(o.Stop)
	defer t.stop.end()
	stop := make(chan struct{})
	t.ss = newSessions(stop, t.print)
	defer t.ss.close()
	for _, p := range t.firsts {
		t.ss.add(t.spec, p)
	}
	stopMetrics := func() {}
	if o.Metrics.serving() {
		if stopMetrics, err = o.Metrics.serveStat(t.ss, t.spec, t.target, o.Stderr); err != nil {
			close(stop)
			t.ss.wait()
			return 0, err
		}
	}
	watchDone := t.watch(stop)
	liveDone := t.live(stop)
	if o.Stat {
		t.stop.watch(func() uint64 { h, _ := t.ss.counts(len(t.spec.Probes)); return sum(h) })
	}
	var reportErr error
	var once sync.Once
	everyDone := make(chan struct{})
	finish := func() {
		once.Do(func() {
			stopMetrics()
			t.ss.detach()
			close(stop)
			<-everyDone // no interval's table after the last one
			<-watchDone
			t.ss.wait()
			<-liveDone
			reportErr = t.report()
			t.ss.close()
			if t.stop.why != "" {
				o.note("%s", t.stop.why)
			}
		})
	}
	ro := t.runOptions()
	ro.stop, ro.stopped = t.stop.done(), finish
	if o.Stat && o.Interval > 0 {
		go func() {
			defer close(everyDone)
			t.every(o.Interval, stop)
		}()
	} else {
		close(everyDone)
	}
	status, err = o.runOrWait(ro)
	finish()
	if err != nil {
		return 0, err
	}
	return status, reportErr
}

// every prints the counts at each interval until stop.
func (t *tracer) every(d time.Duration, stop chan struct{}) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			select {
			case <-stop: // both ready: the run has ended
				return
			default:
			}
			t.writeCounts()
		}
	}
}

// writeCounts prints stat's counts so far (stat --interval).
func (t *tracer) writeCounts() {
	hits, dropped := t.ss.counts(len(t.spec.Probes))
	misses := t.ss.misses(len(t.spec.Probes))
	t.mu.Lock()
	defer t.mu.Unlock()
	writeStat(t.out, t.spec, hits, misses, dropped, t.o.JSON)
	t.out.Flush()
}

// tracer is one trace or stat run.
type tracer struct {
	o      *TraceOptions
	target string     // the first file's
	spec   *spec.Spec // every file's probes (see targetParts)
	parts  []part
	aopts  []*attach.Options // each part's
	firsts []Probes          // each part's first attachment
	ss     *sessions
	sym    *stack.Symbolizer
	out    *bufio.Writer
	mu     sync.Mutex // out and events
	events uint64
	stop   *stopper
}

// attach resolves the probes and attaches them the first time, to each
// file of the run (see targetParts).
func (o *TraceOptions) attach() (*tracer, error) {
	var shape *spec.Spec
	if o.Object.Object != "" {
		var err error
		if shape, o.Defs, err = o.Object.objectDefs(o.Defs, o.SpecFile); err != nil {
			return nil, err
		}
	}
	parts, all, err := o.targetParts()
	if err != nil {
		return nil, err
	}
	if shape != nil && len(parts) > 1 {
		return nil, usage.Errorf("%s names %d files; %s is built for one: name its file with -x", o.Exe, len(parts), o.Object.Object)
	}
	reportUnavailable(o.Stderr, all)
	t := &tracer{o: o, target: parts[0].target, spec: all, parts: parts, sym: stack.NewSymbolizer()}
	t.aopts = make([]*attach.Options, len(parts))
	for i, pt := range parts {
		if t.aopts[i], err = o.partOptions(pt, shape); err != nil {
			return nil, err
		}
	}
	firsts, err := attachParts(parts, func(i int, pt part) (Probes, error) {
		return o.kernel().Attach(pt.spec, pt.target, t.aopts[i])
	})
	if err != nil {
		return nil, err
	}
	t.firsts = firsts
	for i, pt := range parts {
		if t.aopts[i].Stacks != bpfprog.NoStacks && o.PID > 0 {
			firsts[i].AddProcess(o.PID)
		}
		sites := 0
		for _, p := range pt.spec.Probes {
			sites += len(p.Sites)
		}
		if !o.JSON || !o.Stat {
			o.note("%d probes attached at %d sites in %s", len(pt.spec.Probes), sites, pt.target)
		}
	}
	// The command and the event printer share stdout.
	o.Stdout, o.Stderr = locked(o.Stdout), locked(o.Stderr)
	t.out = bufio.NewWriter(o.Stdout)
	return t, nil
}

// partOptions are the attach options of one file of the run, with the
// CO-RE object's when it runs one (shape: the object's probes).
func (o *TraceOptions) partOptions(pt part, shape *spec.Spec) (*attach.Options, error) {
	aopts, err := o.attachOptions(pt.target, pt.spec)
	if err != nil || shape == nil {
		return aopts, err
	}
	if err := o.Object.check(shape, pt.spec, pt.target); err != nil {
		return nil, err
	}
	if aopts.Types, err = o.Object.targetTypes(pt.target); err != nil {
		return nil, err
	}
	aopts.Object = o.Object.Object
	return aopts, nil
}

// attachOptions are the attach options of the run: only the command and
// its descendants when the target is not its binary; stacks with the
// unwind tables of the files the probed process maps.
func (o *TraceOptions) attachOptions(target string, spec *spec.Spec) (*attach.Options, error) {
	a := &attach.Options{PID: o.PID, Descendants: onlyCommand(o.Run), Events: !o.Stat}
	// Tracepoints fire for every process: with a command, they see it and
	// its descendants.
	a.KernelDescendants = len(o.Run) > 0 && hasTracepoints(spec)
	a.StackDepth = o.StackDepth
	switch {
	case o.Stack:
		a.Stacks = bpfprog.EventStacks
	case o.Stacks:
		a.Stacks = bpfprog.CountStacks
	default:
		return a, nil
	}
	var err error
	a.Tables, err = unwindTables(o.PID, o.Run, target)
	return a, err
}

// print prints one event (trace), or counts it (stat).
func (t *tracer) print(spec *spec.Spec, p Probes, e *spec.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.o.Stop.Count; c > 0 && t.events >= c {
		return // past the stop: detaching
	}
	t.events++
	if !t.o.Stat {
		t.printEvent(spec, p, e)
	}
	t.stop.counted(t.events)
}

// printEvent prints one event of trace; t.mu is held.
func (t *tracer) printEvent(spec *spec.Spec, p Probes, e *spec.Event) {
	var frames []stack.Frame
	if e.Stack != nil {
		frames = p.UserFrames(t.sym, int(e.Pid), e.Stack)
	}
	if t.o.JSON {
		b, err := spec.JSON(e)
		if err == nil && t.o.Stack {
			b = withStack(b, stackLines(frames, t.o.StackFormat))
		}
		if err == nil {
			t.out.Write(append(b, '\n'))
		}
	} else {
		t.out.WriteString(spec.Line(e) + "\n")
		lines, mods := stackLines(frames, t.o.StackFormat), stackModules(frames, t.o.StackFormat)
		for i, l := range lines {
			fmt.Fprintf(t.out, "\t%s [%s]\n", l, mods[i])
		}
	}
	t.out.Flush()
}

// replaced follows a replacement of part i's file on disk (a package
// upgrade, a deploy): processes started from now on run the new one.
// Probes stay on the old file for processes still running it, and go on
// the new one.
func (t *tracer) replaced(i int) {
	pt, aopts := t.parts[i], t.aopts[i]
	if len(pt.defs) == 0 && t.o.SpecFile == "" && hasTracepoints(pt.spec) {
		return // only kernel events: nothing in the file
	}
	if aopts.Object != "" {
		t.o.note("%s was replaced on disk: the probes of %s stay on the old file (run it again for the new one)", pt.target, aopts.Object)
		return
	}
	s2, why := pt.spec, ""
	if t.o.SpecFile == "" {
		var err error
		if s2, err = t.o.loadSpec(pt.defs, pt.target); err != nil {
			why = err.Error()
		} else if len(t.parts) > 1 {
			s2 = namedByFile(s2, pt.target)
		}
	} else if err := SameBuild(pt.target, pt.spec.BuildID); err != nil {
		s2, why = nil, "the spec is for another build"
	}
	if s2 != nil && len(t.parts) > 1 && len(s2.Probes) != len(pt.spec.Probes) {
		s2, why = nil, fmt.Sprintf("the new file has %d probes of these definitions, the old %d", len(s2.Probes), len(pt.spec.Probes))
	}
	if s2 != nil {
		p, err := t.o.kernel().Attach(s2, pt.target, aopts)
		if err == nil {
			t.ss.add(withPart(t.spec, pt.offset, s2), shift(p, pt.offset))
			t.o.note("%s was replaced on disk: probes re-attached to the new file", pt.target)
			return
		}
		why = err.Error()
	}
	t.o.note("%s was replaced on disk and its probes cannot follow: %s", pt.target, why)
}

// watch follows each file of the run being replaced on disk (see
// replaced) until stop; the channel closes when every watcher ended.
func (t *tracer) watch(stop chan struct{}) chan struct{} {
	all := make(chan struct{})
	var wg sync.WaitGroup
	for i, pt := range t.parts {
		done := make(chan struct{})
		wg.Go(func() { <-done })
		go watchReplaced(stop, done, pt.target, func() { t.replaced(i) })
	}
	go func() {
		wg.Wait()
		close(all)
	}()
	return all
}

// live keeps a live count on a terminal's last row, out of the way of
// the events and the command's output, until stop; the channel closes
// when the row is given back.
func (t *tracer) live(stop chan struct{}) chan struct{} {
	done := make(chan struct{})
	var l *liveLine
	if !t.o.JSON {
		l = startLive(t.o.Stderr)
	}
	if l == nil {
		close(done)
		return done
	}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				l.stop()
				close(done)
				return
			case <-tick.C:
				hits, dropped := t.ss.counts(len(t.spec.Probes))
				var n uint64
				for _, h := range hits {
					n += h
				}
				l.show(fmt.Sprintf("goprobe: %d hits, %d dropped", n, dropped))
			}
		}
	}()
	return done
}

// runOptions: with -p and no command, done when the process is; the
// command named to the descendant filter at its exec (the constructors
// of its libraries run before its entry point); with stacks, the
// unwinder follows the command's mappings: at the exec, each time the
// loader mapped libraries (before their constructors), then as they
// change (a dlopen), and its descendants'.
func (t *tracer) runOptions() runOptions {
	var ro runOptions
	if t.o.PID > 0 && len(t.o.Run) == 0 {
		ro.every, ro.tick = 100*time.Millisecond, func() bool { return alive(t.o.PID) }
	}
	// The parts differ only in kernel events, which the first has.
	a := t.aopts[0]
	if a.Descendants || a.KernelDescendants {
		ro.gate = &attach.GateHooks{Exec: t.ss.setRoot}
	}
	if a.Stacks != bpfprog.NoStacks && len(t.o.Run) == 0 && t.o.PID == 0 {
		// -x alone: each process running a probed file, now or later,
		// gets its tables as it is found (processes of a library's
		// users unwind by frame pointer).
		var running []*stack.Running
		for _, pt := range t.parts {
			running = append(running, stack.NewRunning(pt.target))
		}
		add := func() bool {
			for _, r := range running {
				for _, pid := range r.New() {
					t.ss.addProcess(pid)
				}
			}
			return true
		}
		add()
		ro.every, ro.tick = 20*time.Millisecond, add
	}
	if a.Stacks != bpfprog.NoStacks && len(t.o.Run) > 0 {
		var child int
		ro.gate = &attach.GateHooks{
			Exec: func(pid int) {
				child = pid
				t.ss.setRoot(pid)
				t.ss.addProcess(pid)
			},
			Loaded: t.ss.addProcess,
		}
		ro.every, ro.tick = 20*time.Millisecond, func() bool {
			t.ss.addProcess(child)
			t.ss.addDescendants()
			return true
		}
	}
	return ro
}

// report prints what the run ends with: stat's counts (with stacks), or
// trace's summary when anything was lost or on a terminal's run.
func (t *tracer) report() error {
	defer t.out.Flush()
	hits, dropped := t.ss.counts(len(t.spec.Probes))
	misses := t.ss.misses(len(t.spec.Probes))
	switch {
	case t.o.Stat && t.o.Stacks:
		return t.writeStatStacks(hits, misses, dropped)
	case t.o.Stat:
		writeStat(t.out, t.spec, hits, misses, dropped, t.o.JSON)
		return nil
	}
	var missed uint64
	for _, m := range misses {
		missed += m
	}
	note := ""
	if t.o.Stack {
		c := t.ss.stackCounters()
		note = strings.Join(slices.DeleteFunc([]string{truncatedNote(c, t.o.StackDepth), noTableNote(c)}, func(s string) bool { return s == "" }), "; ")
	}
	if dropped > 0 || missed > 0 || !t.o.JSON || note != "" {
		t.mu.Lock()
		defer t.mu.Unlock()
		if note != "" {
			note = "; " + note
		}
		t.o.note("%d events, %d dropped (ring buffer full), %d missed (another BPF program was running)%s", t.events, dropped, missed, note)
	}
	return nil
}

// statRow is one probe's line of goprobe stat.
type statRow struct {
	Probe  string `json:"probe"`
	Count  uint64 `json:"count"`
	Sites  int    `json:"sites"`
	Missed uint64 `json:"missed"`
}

func statRows(spec *spec.Spec, hits, misses []uint64) []statRow {
	var rows []statRow
	for i, p := range spec.Probes {
		r := statRow{Probe: p.Def, Count: hits[i], Sites: len(p.Sites)}
		if i < len(misses) {
			r.Missed = misses[i]
		}
		rows = append(rows, r)
	}
	return rows
}

func writeStat(w io.Writer, spec *spec.Spec, hits, misses []uint64, dropped uint64, asJSON bool) {
	rows := statRows(spec, hits, misses)
	if asJSON {
		b, _ := jsonx.Marshal(struct {
			Probes  []statRow `json:"probes"`
			Dropped uint64    `json:"dropped"`
		}{rows, dropped})
		w.Write(append(b, '\n'))
		return
	}
	t := table.New(w, table.Left("PROBE"), table.Right("COUNT"), table.Right("SITES"), table.Right("MISSED"))
	for _, r := range rows {
		t.Row(r.Probe, fmt.Sprint(r.Count), fmt.Sprint(r.Sites), fmt.Sprint(r.Missed))
	}
	t.Flush()
	if dropped > 0 {
		fmt.Fprintf(w, "%d records dropped (ring buffer full)\n", dropped)
	}
}

// hasTracepoints reports whether spec has kernel tracepoint probes.
func hasTracepoints(s *spec.Spec) bool {
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			if site.Kind == spec.SiteTracepoint {
				return true
			}
		}
	}
	return false
}

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/flame"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

type traceFlags struct {
	exe     string
	pid     int
	spec    string
	json    bool
	stack   bool        // trace --stack
	stacks  bool        // stat --stacks
	folded  string      // stat --stacks --folded FILE
	metrics metricFlags // stat and hist --listen
}

func traceCommand(stdout, stderr io.Writer, stat bool) *cobra.Command {
	var f traceFlags
	use, short := "trace [flags] 'PROBE [ARG...]'... [-- CMD ARGS...]", "Print one line per hit with the probe's arguments"
	example := `  goprobe trace -x ./app 'main.(*acc).add v a->n'
  goprobe trace --json 'maybe_alloc n' -- ./prog 10
  goprobe trace --spec app.spec.json -x ./app.stripped -- ./app.stripped`
	if stat {
		use, short = "stat [flags] 'PROBE'... [-- CMD ARGS...]", "Count the hits of each probe and print the counts at exit"
		example = `  goprobe stat 'main.work' 'main.twice' -- ./app`
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			defs, run := args, []string(nil)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				defs, run = args[:d], args[d:]
			}
			return runTrace(&f, defs, run, stdout, stderr, stat)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.exe, "exe", "x", "", "the binary to probe (default: CMD's, or /proc/PID/exe)")
	fl.IntVarP(&f.pid, "pid", "p", 0, "probe only this process")
	fl.StringVar(&f.spec, "spec", "", "take the probes from a spec made by goprobe gen --format=spec (no debug info needed)")
	fl.BoolVar(&f.json, "json", false, "print JSON lines (trace) or a JSON object (stat)")
	if stat {
		fl.BoolVar(&f.stacks, "stacks", false, "count the hits per distinct user stack, unwound in the kernel")
		fl.StringVar(&f.folded, "folded", "", "with --stacks: write the stacks in the folded format to FILE")
		addMetricFlags(fl, &f.metrics, false)
	} else {
		fl.BoolVar(&f.stack, "stack", false, "add the user stack, unwound in the kernel, to each event")
	}
	return cmd
}

// probeTarget is the file to attach to: -x, CMD's binary, or the process's.
func probeTarget(f *traceFlags, run []string) (string, error) {
	switch {
	case f.exe != "":
		return f.exe, nil
	case len(run) > 0:
		p, err := exec.LookPath(run[0])
		if err != nil {
			return "", fmt.Errorf("%s: %v", run[0], err)
		}
		return filepath.Abs(p)
	case f.pid > 0:
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", f.pid))
		if err != nil {
			return "", processError(f.pid, err)
		}
		return exe, nil
	}
	return "", usageError{errors.New("name the binary with -x, a process with -p, or a command after --")}
}

// processError says in one line why process pid cannot be read.
func processError(pid int, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("process %d does not exist: give -p the id of a running process (pgrep NAME lists them)", pid)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("process %d cannot be read by this user: run as root or as the process's owner", pid)
	}
	return fmt.Errorf("process %d: %v", pid, err)
}

// loadSpec builds the spec from definitions and DWARF, or reads --spec and
// checks that it was made for target.
func loadSpec(f *traceFlags, defs []string, target string) (*probe.Spec, error) {
	if f.spec != "" {
		if len(defs) > 0 {
			return nil, usageError{errors.New("--spec holds the probes: give no definitions")}
		}
		r, err := os.Open(f.spec)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		s, err := probe.ReadSpec(r, f.spec)
		if err != nil {
			return nil, err
		}
		if err := sameBuild(target, s.BuildID); err != nil {
			return nil, err
		}
		return s, nil
	}
	if len(defs) == 0 {
		return nil, usageError{errors.New("no probe definitions")}
	}
	var ds []*probe.Def
	for _, a := range defs {
		d, err := probe.Parse(a)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	r, done, err := resolver(target, ds)
	if err != nil {
		return nil, err
	}
	defer done()
	return r.Spec(ds)
}

// onlyCommand reports whether probes on target should see only the
// command and its descendants: target is not the command's own binary (a
// library, or a program the command runs), so other processes use it too.
// Probes on the command's binary see every process running it.
func onlyCommand(target string, run []string) bool {
	if len(run) == 0 {
		return false
	}
	bin, err := exec.LookPath(run[0])
	if err != nil {
		return false
	}
	a, err1 := filepath.EvalSymlinks(bin)
	b, err2 := filepath.EvalSymlinks(target)
	return err1 != nil || err2 != nil || a != b
}

// targetSpec picks the file to probe and resolves the definitions against
// it: -x, CMD's binary, or with -p the process's executable, else the
// first library it maps that has the functions (goprobe trace -p PID
// 'malloc size').
func targetSpec(f *traceFlags, defs, run []string, stderr io.Writer) (string, *probe.Spec, error) {
	target, err := probeTarget(f, run)
	if err != nil {
		return "", nil, err
	}
	// A definition of an indirect function (strlen) is aimed at the
	// implementation the CPU runs.
	load := func(target string) (*probe.Spec, error) {
		ds, notes := defs, []string(nil)
		if f.spec == "" {
			var err error
			if ds, notes, err = resolveIFuncs(defs, target, f.pid); err != nil {
				return nil, err
			}
		}
		s, err := loadSpec(f, ds, target)
		if err == nil {
			for _, n := range notes {
				fmt.Fprintf(stderr, "goprobe: %s\n", n)
			}
		}
		return s, err
	}
	spec, err := load(target)
	if err == nil || !errors.Is(err, types.ErrNotFound) || f.pid == 0 || f.exe != "" || f.spec != "" {
		return target, spec, err
	}
	ms, merr := stack.ProcMappings(f.pid)
	if merr != nil {
		return "", nil, err
	}
	// In the dynamic loader's order (the C library before the loader and
	// its own malloc), then the files loaded later (dlopen).
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	loaded := stack.LoadedFiles(target)
	rank := map[string]int{}
	for i, p := range loaded {
		rank[real(p)] = i + 1
	}
	later := len(loaded) + 1
	var files []string
	seen := map[string]bool{real(target): true}
	for _, m := range ms {
		if p := real(m.Path); !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	sort.SliceStable(files, func(i, j int) bool {
		ri, rj := rank[files[i]], rank[files[j]]
		if ri == 0 {
			ri = later
		}
		if rj == 0 {
			rj = later
		}
		return ri < rj
	})
	for _, p := range files {
		if s, lerr := load(p); lerr == nil {
			return p, s, nil
		}
	}
	return "", nil, fmt.Errorf("%v; no library process %d maps has them all either (name the file with -x)", err, f.pid)
}

func runTrace(f *traceFlags, defs, run []string, stdout, stderr io.Writer, stat bool) error {
	if f.folded != "" && !f.stacks {
		return usageError{errors.New("--folded needs --stacks")}
	}
	if err := f.metrics.check(max(len(defs), 1)); err != nil {
		return err
	}
	target, spec, err := targetSpec(f, defs, run, stderr)
	if err != nil {
		return err
	}
	reportUnavailable(stderr, spec)
	opts, err := stackOptions(f, target, run)
	if err != nil {
		return err
	}
	opts.Descendants = onlyCommand(target, run)
	opts.Events = !stat
	first, err := probe.Attach(spec, target, opts)
	if err != nil {
		return err
	}
	if opts.Stacks != probe.NoStacks && f.pid > 0 {
		first.AddProcess(f.pid)
	}
	sym := stack.NewSymbolizer()
	sites := 0
	for _, p := range spec.Probes {
		sites += len(p.Sites)
	}
	if !f.json || !stat {
		fmt.Fprintf(stderr, "goprobe: %d probes attached at %d sites in %s\n", len(spec.Probes), sites, target)
	}

	// The command and the event printer share stdout.
	if _, isFile := stdout.(*os.File); !isFile {
		stdout = &lockedWriter{w: stdout}
	}
	if _, isFile := stderr.(*os.File); !isFile {
		stderr = &lockedWriter{w: stderr}
	}
	out := bufio.NewWriter(stdout)
	var mu sync.Mutex
	var events uint64
	printEvent := func(sess *probe.Session, e *probe.Event) {
		mu.Lock()
		defer mu.Unlock()
		events++
		if stat {
			return
		}
		var frames []flame.Frame
		if e.Stack != nil {
			frames = sess.UserFrames(sym, int(e.Pid), e.Stack)
		}
		if f.json {
			b, err := sess.Spec.JSON(e)
			if err == nil && f.stack {
				b = withStack(b, frames)
			}
			if err == nil {
				out.Write(append(b, '\n'))
			}
		} else {
			out.WriteString(sess.Spec.Line(e) + "\n")
			for i := len(frames) - 1; i >= 0; i-- {
				fmt.Fprintf(out, "\t%s [%s]\n", frames[i].Name, frames[i].Module)
			}
		}
		out.Flush()
	}
	stop := make(chan struct{})
	ss := newSessions(stop, printEvent)
	defer ss.close()
	ss.add(first)
	if f.metrics.listen != "" {
		stopMetrics, err := f.metrics.serveStat(ss, spec, target, stderr)
		if err != nil {
			close(stop)
			ss.wait()
			return err
		}
		defer stopMetrics()
	}
	watchDone := make(chan struct{})
	go watchReplaced(stop, watchDone, target, func(old, cur fileID) {
		// The file on disk was replaced (a package upgrade, a deploy):
		// processes started from now on run the new one. Probes stay on the
		// old file for processes still running it, and go on the new one.
		s2, why := spec, ""
		if f.spec == "" {
			s2, why = resolveAgain(defs, target)
		} else if err := sameBuild(target, spec.BuildID); err != nil {
			s2, why = nil, "the spec is for another build"
		}
		if s2 != nil {
			sess, err := probe.Attach(s2, target, opts)
			if err == nil {
				ss.add(sess)
				fmt.Fprintf(stderr, "goprobe: %s was replaced on disk: probes re-attached to the new file\n", target)
				return
			}
			why = err.Error()
		}
		fmt.Fprintf(stderr, "goprobe: %s was replaced on disk and its probes cannot follow: %s\n", target, why)
	})

	// On a terminal, a live count on its last row, out of the way of the
	// events and the command's output.
	liveDone := make(chan struct{})
	var live *liveLine
	if !f.json {
		live = startLive(stderr)
	}
	if live != nil {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					live.stop()
					close(liveDone)
					return
				case <-t.C:
					hits, dropped := ss.counts(len(spec.Probes))
					var n uint64
					for _, h := range hits {
						n += h
					}
					live.show(fmt.Sprintf("goprobe: %d hits, %d dropped", n, dropped))
				}
			}
		}()
	} else {
		close(liveDone)
	}
	var ro runOptions
	if f.pid > 0 && len(run) == 0 {
		// -p: done when the process is.
		ro.every, ro.tick = 100*time.Millisecond, func() bool { return alive(f.pid) }
	}
	if opts.Descendants {
		// Named at the exec: the constructors of the command's libraries
		// run before its entry point.
		ro.gate = &probe.GateHooks{Exec: ss.setRoot}
	}
	if opts.Stacks != probe.NoStacks && len(run) > 0 {
		// The unwinder follows the command's mappings: at the exec, each
		// time the loader mapped libraries (before their constructors),
		// then as they change (a dlopen).
		child := 0
		ro.gate = &probe.GateHooks{
			Exec: func(pid int) {
				child = pid
				ss.setRoot(pid)
				ss.addProcess(pid)
			},
			Loaded: ss.addProcess,
		}
		ro.every, ro.tick = 20*time.Millisecond, func() bool {
			ss.addProcess(child)
			ss.addDescendants()
			return true
		}
	}
	status, err := runOrWait(run, stdout, stderr, ro)
	if err != nil {
		close(stop)
		<-watchDone
		ss.wait()
		<-liveDone
		return err
	}
	close(stop)
	<-watchDone
	ss.wait()
	<-liveDone
	hits, dropped := ss.counts(len(spec.Probes))
	misses := ss.misses(len(spec.Probes))
	var missed uint64
	for _, m := range misses {
		missed += m
	}
	if stat && f.stacks {
		if err := writeStatStacks(out, ss, sym, spec, hits, misses, dropped, f); err != nil {
			return err
		}
	} else if stat {
		writeStat(out, spec, hits, misses, dropped, f.json)
	} else {
		note := ""
		if f.stack {
			note = noTableNote(ss.stackCounters())
		}
		if dropped > 0 || missed > 0 || !f.json || note != "" {
			mu.Lock()
			defer mu.Unlock()
			if note != "" {
				note = "; " + note
			}
			fmt.Fprintf(stderr, "goprobe: %d events, %d dropped (ring buffer full), %d missed (another BPF program was running)%s\n", events, dropped, missed, note)
		}
	}
	out.Flush()
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}

func writeStat(w io.Writer, spec *probe.Spec, hits, misses []uint64, dropped uint64, asJSON bool) {
	type row struct {
		Probe  string `json:"probe"`
		Count  uint64 `json:"count"`
		Sites  int    `json:"sites"`
		Missed uint64 `json:"missed"`
	}
	var rows []row
	for i, p := range spec.Probes {
		r := row{Probe: p.Def, Count: hits[i], Sites: len(p.Sites)}
		if i < len(misses) {
			r.Missed = misses[i]
		}
		rows = append(rows, r)
	}
	if asJSON {
		b, _ := jsonx.Marshal(struct {
			Probes  []row  `json:"probes"`
			Dropped uint64 `json:"dropped"`
		}{rows, dropped})
		w.Write(append(b, '\n'))
		return
	}
	width := len("PROBE")
	for _, r := range rows {
		width = max(width, len(r.Probe))
	}
	fmt.Fprintf(w, "%-*s %12s %6s %8s\n", width, "PROBE", "COUNT", "SITES", "MISSED")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s %12d %6d %8d\n", width, r.Probe, r.Count, r.Sites, r.Missed)
	}
	if dropped > 0 {
		fmt.Fprintf(w, "%d records dropped (ring buffer full)\n", dropped)
	}
}

// lockedWriter serialises writes from the command's output copier and the
// event printer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func statID(path string) (fileID, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	id := fileID{size: st.Size(), mtime: st.ModTime()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(sys.Dev), sys.Ino
	}
	return id, true
}

// watchReplaced calls replaced each time the file at path becomes another
// file (a new inode, or new contents), until stop is closed.
func watchReplaced(stop, done chan struct{}, path string, replaced func(old, cur fileID)) {
	defer close(done)
	last, ok := statID(path)
	if !ok {
		return
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			cur, ok := statID(path)
			if !ok || cur == last {
				continue
			}
			// Let a writer finish: the same identity twice in a row.
			time.Sleep(50 * time.Millisecond)
			if again, ok := statID(path); !ok || again != cur {
				continue
			}
			replaced(last, cur)
			last = cur
		}
	}
}

// resolveAgain resolves the definitions against the file now at target.
func resolveAgain(defs []string, target string) (*probe.Spec, string) {
	s, err := loadSpec(&traceFlags{}, defs, target)
	if err != nil {
		return nil, err.Error()
	}
	return s, ""
}

// runOptions tune runOrWait.
type runOptions struct {
	// tick, when every > 0, is called at that interval; without a
	// command, its false ends the wait (the process watched is gone).
	every time.Duration
	tick  func() bool
	// gate, when not nil, starts the command under probe.StartGated: its
	// hooks run at the exec, before any of the command's code, and each
	// time the loader mapped libraries, before their constructors.
	gate *probe.GateHooks
}

// runOrWait runs the command, forwarding SIGINT and SIGTERM to it, and
// returns its exit status; without a command it waits for SIGINT or
// SIGTERM.
func runOrWait(run []string, stdout, stderr io.Writer, o runOptions) (int, error) {
	every, onTick := o.every, o.tick
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	var done chan error
	var c *exec.Cmd
	if len(run) > 0 {
		c = exec.Command(run[0], run[1:]...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
		if o.gate != nil {
			started, err := probe.StartGated(c, *o.gate)
			var ended *probe.EndedError
			if errors.As(err, &ended) {
				return ended.Status, nil // the loader failed: its status is the command's
			}
			if err != nil {
				return 0, err
			}
			c = started
		} else if err := c.Start(); err != nil {
			return 0, err
		}
		done = make(chan error, 1)
		go func() { done <- c.Wait() }()
	}
	var ticks <-chan time.Time
	if every > 0 && onTick != nil {
		t := time.NewTicker(every)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status := ee.ExitCode()
				if status < 0 {
					status = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
				}
				return status, nil
			}
			return 0, nil
		case s := <-sig:
			if c == nil {
				return 0, nil
			}
			c.Process.Signal(s) // the command decides; goprobe waits for it
		case <-ticks:
			if !onTick() && c == nil {
				return 0, nil
			}
		}
	}
}

// reportUnavailable says, before attaching, which sites cannot read which
// arguments.
func reportUnavailable(w io.Writer, spec *probe.Spec) {
	for _, p := range spec.Probes {
		for _, s := range p.Sites {
			if s.Note != "" {
				fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: %s\n", p.Def, s.Kind, s.Addr, s.Function, s.Note)
			}
			for _, a := range s.Args {
				if a.Unavailable != "" {
					fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: %s: %s\n", p.Def, s.Kind, s.Addr, s.Function, a.Name, a.Unavailable)
				}
			}
		}
	}
}

// resolver resolves against target's DWARF or, when it has none (a
// stripped binary, a distribution's library), its .gopclntab or symbols.
func resolver(target string, defs []*probe.Def) (*probe.Resolver, func(), error) {
	df, err := dwarf.Open(target, nil)
	if err == nil {
		r, err := probe.NewResolver(df)
		if err != nil {
			df.Close()
			return nil, nil, err
		}
		return r, func() { df.Close() }, nil
	}
	if !errors.Is(err, types.ErrNoDebugInfo) {
		return nil, nil, err
	}
	ef, oerr := elfx.Open(target)
	if oerr != nil {
		return nil, nil, err
	}
	r, rerr := symbolResolver(ef, defs)
	if rerr != nil {
		ef.Close()
		return nil, nil, rerr
	}
	return r, func() { ef.Close() }, nil
}

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/probe"
)

type traceFlags struct {
	exe  string
	pid  int
	spec string
	json bool
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
		return os.Readlink(fmt.Sprintf("/proc/%d/exe", f.pid))
	}
	return "", usageError{errors.New("name the binary with -x, a process with -p, or a command after --")}
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
	df, err := dwarf.Open(target, nil)
	if err != nil {
		return nil, err
	}
	defer df.Close()
	r, err := probe.NewResolver(df)
	if err != nil {
		return nil, err
	}
	return r.Spec(ds)
}

func runTrace(f *traceFlags, defs, run []string, stdout, stderr io.Writer, stat bool) error {
	target, err := probeTarget(f, run)
	if err != nil {
		return err
	}
	spec, err := loadSpec(f, defs, target)
	if err != nil {
		return err
	}
	// Say before attaching which sites cannot read which arguments.
	for _, p := range spec.Probes {
		for _, s := range p.Sites {
			for _, a := range s.Args {
				if a.Unavailable != "" {
					fmt.Fprintf(stderr, "goprobe: %s: %s site at %#x in %s: %s: %s\n", p.Def, s.Kind, s.Addr, s.Function, a.Name, a.Unavailable)
				}
			}
		}
	}
	sess, err := probe.Attach(spec, target, f.pid)
	if err != nil {
		return err
	}
	defer sess.Close()
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
	printEvent := func(e *probe.Event) {
		mu.Lock()
		defer mu.Unlock()
		if f.json {
			b, err := spec.JSON(e)
			if err == nil {
				out.Write(append(b, '\n'))
			}
		} else {
			out.WriteString(spec.Line(e) + "\n")
		}
		out.Flush()
	}
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	var events uint64
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				// Drain what the programs wrote before the end.
				for {
					e, err := sess.Read(time.Now().Add(time.Millisecond))
					if err != nil {
						return
					}
					events++
					if !stat {
						printEvent(e)
					}
				}
			default:
			}
			e, err := sess.Read(time.Now().Add(20 * time.Millisecond))
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					continue
				}
				return
			}
			events++
			if !stat {
				printEvent(e)
			}
		}
	}()

	// On a terminal, a live count on stderr.
	liveDone := make(chan struct{})
	if !f.json && isTerminal(stderr) {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					fmt.Fprint(stderr, "\r\033[K")
					close(liveDone)
					return
				case <-t.C:
					hits, dropped, _ := sess.Counts()
					var n uint64
					for _, h := range hits {
						n += h
					}
					fmt.Fprintf(stderr, "\r\033[Kgoprobe: %d hits, %d dropped", n, dropped)
				}
			}
		}()
	} else {
		close(liveDone)
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	status := 0
	if len(run) > 0 {
		c := exec.Command(run[0], run[1:]...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
		if err := c.Start(); err != nil {
			close(stop)
			<-readerDone
			return err
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		for waiting := true; waiting; {
			select {
			case err := <-done:
				waiting = false
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					status = ee.ExitCode()
					if status < 0 {
						status = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
					}
				}
			case s := <-sig:
				c.Process.Signal(s) // the command decides; goprobe waits for it
			}
		}
	} else {
		<-sig
	}
	close(stop)
	sess.Wake()
	<-readerDone
	<-liveDone
	hits, dropped, err := sess.Counts()
	if err != nil {
		return err
	}
	misses := sess.Misses()
	var missed uint64
	for _, m := range misses {
		missed += m
	}
	if stat {
		writeStat(out, spec, hits, misses, dropped, f.json)
	} else if dropped > 0 || missed > 0 || !f.json {
		fmt.Fprintf(stderr, "goprobe: %d events, %d dropped (ring buffer full), %d missed (another BPF program was running)\n", events, dropped, missed)
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
		b, _ := json.Marshal(struct {
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

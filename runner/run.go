package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/binscope/binscope/attach"
)

// runOptions tune runOrWait.
type runOptions struct {
	// tick, when every > 0, is called at that interval; without a
	// command, its false ends the wait (the process watched is gone).
	every time.Duration
	tick  func() bool
	// gate, when not nil, starts the command under the kernel's exec
	// gate: its hooks run at the exec, before any of the command's code,
	// and each time the loader mapped libraries, before their
	// constructors.
	gate *attach.GateHooks
	// stop, when it closes, ends the run before the command does (see
	// Stop): stopped detaches and prints; a command runs on, and the
	// wait goes on until it ends, without ticks.
	stop    <-chan struct{}
	stopped func()
}

// runOrWait runs the command, forwarding SIGINT and SIGTERM to it, and
// returns its exit status (128 plus the signal that killed it); without
// a command it waits for SIGINT or SIGTERM, or for tick to say the
// process is gone.
func (o *Options) runOrWait(ro runOptions) (int, error) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	var done chan error
	var c *exec.Cmd
	if len(o.Run) > 0 {
		var err error
		var status int
		if c, status, err = o.start(ro.gate); c == nil {
			return status, err
		}
		done = make(chan error, 1)
		go func() { done <- c.Wait() }()
	}
	var ticks <-chan time.Time
	if ro.every > 0 && ro.tick != nil {
		t := time.NewTicker(ro.every)
		defer t.Stop()
		ticks = t.C
	}
	stop := ro.stop
	for {
		select {
		case err := <-done:
			return exitStatus(err), nil
		case s := <-sig:
			if c == nil {
				return 0, nil
			}
			c.Process.Signal(s) // the command decides; goprobe waits for it
		case <-ticks:
			if !ro.tick() && c == nil {
				return 0, nil
			}
		case <-stop:
			stop, ticks = nil, nil
			ro.stopped()
			if c == nil {
				return 0, nil
			}
			o.note("%s (pid %d) runs on unprobed; goprobe ends when it does", o.Run[0], c.Process.Pid)
		}
	}
}

// start starts the command, under the exec gate when gate is not nil; a
// nil command comes with the status of one that ended before its entry
// point (the loader failed), or the error.
func (o *Options) start(gate *attach.GateHooks) (*exec.Cmd, int, error) {
	c := exec.Command(o.Run[0], o.Run[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, o.Stdout, o.Stderr
	if gate == nil {
		if err := c.Start(); err != nil {
			return nil, 0, err
		}
		return c, 0, nil
	}
	started, err := o.kernel().Start(c, *gate)
	var ended *attach.EndedError
	if errors.As(err, &ended) {
		return nil, ended.Status, nil // the loader failed: its status is the command's
	}
	if err != nil {
		return nil, 0, err
	}
	return started, 0, nil
}

// exitStatus is the status of a command that ended with err (from
// Wait): its exit code, or 128 plus the signal that killed it.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0
	}
	status := ee.ExitCode()
	if status < 0 {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			status = 128 + int(ws.Signal())
		}
	}
	return status
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

// locked is w, serialised unless it is a file (whose writes the kernel
// serialises).
func locked(w io.Writer) io.Writer {
	if _, isFile := w.(*os.File); isFile {
		return w
	}
	return &lockedWriter{w: w}
}

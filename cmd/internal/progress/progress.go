// Package progress shows, on a terminal, what a command that has run for
// more than two seconds is doing: one line on standard error, rewritten in
// place and erased when the work ends, so that a user reading a 230 MB
// debug file sees it move. Nothing is written when standard error is not
// a terminal (a pipe, a file, a test).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/binscope/binscope/internal/elfx"
)

// after is how long a job runs before its line shows; every is how often
// the line is rewritten.
const (
	after = 2 * time.Second
	every = 250 * time.Millisecond
)

// Start shows the progress of reading file on w when w is a terminal;
// stop erases the line (and must be called once the work is done, before
// its output, if that goes to the same terminal).
func Start(w io.Writer, tool, file string) (stop func()) {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return func() {}
	}
	return start(w, after, every, func(elapsed time.Duration) string {
		return fmt.Sprintf("%s: reading %s: %d MB of debug info read, %.0f s", tool, file, elfx.SectionBytes()>>20, elapsed.Seconds())
	})
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// start writes line's text on w every period once delay has passed.
func start(w io.Writer, delay, period time.Duration, line func(elapsed time.Duration) string) (stop func()) {
	t0 := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-done:
			return
		case <-time.After(delay):
		}
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			fmt.Fprintf(w, "\r%s\x1b[K", line(time.Since(t0)))
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

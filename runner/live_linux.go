package runner

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// liveLine keeps a status line on a terminal's last row, under a scroll
// region that holds everything else (the events, the command's own
// output), as apt's progress line does: nothing written to the terminal
// lands on the status line, nor the status line on it.
type liveLine struct {
	mu   sync.Mutex
	w    io.Writer
	rows int
}

// startLive reserves w's last row, or returns nil when w is not a
// terminal (or is too small).
func startLive(w io.Writer) *liveLine {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(w) {
		return nil
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row < 2 {
		return nil
	}
	l := &liveLine{w: w, rows: int(ws.Row)}
	// A new line first, so that shrinking the region scrolls nothing
	// away; the region's setting moves the cursor home: save, restore,
	// and back up to the line it was on.
	fmt.Fprintf(w, "\n\0337\033[1;%dr\0338\033[1A", l.rows-1)
	return l
}

// show writes text on the status line; the cursor stays where it was.
func (l *liveLine) show(text string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "\0337\033[%d;1H\033[2K%s\0338", l.rows, text)
}

// stop gives the terminal its whole height back and clears the status
// line.
func (l *liveLine) stop() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "\0337\033[1;%dr\033[%d;1H\033[2K\0338", l.rows, l.rows)
}

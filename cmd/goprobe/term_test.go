package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal of rows x 80: the master to read what
// the terminal shows, the slave to write to as a terminal.
func openPty(t *testing.T, rows int) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: 80}); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// screen is a small terminal: the escapes goprobe writes (cursor save and
// restore, scroll region, cursor position and up, erase line), lines
// scrolled off the top kept in history.
type screen struct {
	rows, cols       int
	lines            [][]rune
	history          []string
	row, col         int
	top, bottom      int // scroll region, 0-based, inclusive
	savedR, savedCol int
}

func newScreen(rows, cols int) *screen {
	s := &screen{rows: rows, cols: cols, bottom: rows - 1}
	for i := 0; i < rows; i++ {
		s.lines = append(s.lines, nil)
	}
	return s
}

func (s *screen) put(r rune) {
	for len(s.lines[s.row]) <= s.col {
		s.lines[s.row] = append(s.lines[s.row], ' ')
	}
	s.lines[s.row][s.col] = r
	s.col++
}

func (s *screen) lineFeed() {
	if s.row == s.bottom {
		if s.top == 0 {
			s.history = append(s.history, string(s.lines[0]))
		}
		copy(s.lines[s.top:s.bottom], s.lines[s.top+1:s.bottom+1])
		s.lines[s.bottom] = nil
		return
	}
	if s.row < s.rows-1 {
		s.row++
	}
}

func (s *screen) write(b string) {
	rs := []rune(b)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\r':
			s.col = 0
		case c == '\n':
			s.lineFeed()
		case c == 033 && i+1 < len(rs) && rs[i+1] == '7':
			s.savedR, s.savedCol = s.row, s.col
			i++
		case c == 033 && i+1 < len(rs) && rs[i+1] == '8':
			s.row, s.col = s.savedR, s.savedCol
			i++
		case c == 033 && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';') {
				j++
			}
			if j == len(rs) {
				return
			}
			var ps []int
			for _, p := range strings.Split(string(rs[i+2:j]), ";") {
				n, _ := strconv.Atoi(p)
				ps = append(ps, n)
			}
			arg := func(k, def int) int {
				if k < len(ps) && ps[k] > 0 {
					return ps[k]
				}
				return def
			}
			switch rs[j] {
			case 'r':
				s.top, s.bottom = arg(0, 1)-1, arg(1, s.rows)-1
				s.row, s.col = 0, 0
			case 'H', 'f':
				s.row, s.col = arg(0, 1)-1, arg(1, 1)-1
			case 'A':
				s.row = max(s.row-arg(0, 1), 0)
			case 'K':
				if arg(0, 0) == 2 {
					s.lines[s.row] = nil
				} else if s.col < len(s.lines[s.row]) {
					s.lines[s.row] = s.lines[s.row][:s.col]
				}
			}
			i = j
		case c >= ' ':
			if s.col >= s.cols {
				s.col = 0
				s.lineFeed()
			}
			s.put(c)
		}
	}
}

// all is the history and the screen, line by line.
func (s *screen) all() []string {
	out := append([]string(nil), s.history...)
	for _, l := range s.lines {
		out = append(out, string(l))
	}
	return out
}

// TestLiveLineOnTerminal: on a terminal, goprobe trace keeps its live
// count on the last row; no event, and no line of the command's, ever
// shares a line with it.
func TestLiveLineOnTerminal(t *testing.T) {
	needBPF(t)
	const rows = 12
	m, s := openPty(t, rows)
	defer m.Close()
	raw := make(chan string)
	go func() {
		b, _ := io.ReadAll(m)
		raw <- string(b)
	}()
	bin := buildAlloc(t)
	// 40 events over two seconds and more: the live count shows twice.
	code := goprobe([]string{"trace", "here n", "--", bin, "40", "60"}, s, s)
	s.Close()
	out := <-raw
	if code != 0 {
		t.Fatalf("exit %d: %q", code, out)
	}
	if !strings.Contains(out, "hits, 0 dropped") {
		t.Fatalf("no live count shown: %q", out)
	}
	sc := newScreen(rows, 80)
	sc.write(out)
	event := regexp.MustCompile(`\d+/\d+ here `)
	events := 0
	for _, l := range sc.all() {
		if loc := event.FindStringIndex(l); loc != nil {
			events++
			if loc[0] != 0 {
				t.Errorf("an event that does not start its line: %q", l)
			}
		}
		if strings.Contains(l, "hits,") && (event.MatchString(l) || strings.Contains(l, "here 40")) {
			t.Errorf("the live count shares a line: %q", l)
		}
	}
	if events != 40 {
		t.Errorf("%d events on the terminal, want 40:\n%s", events, strings.Join(sc.all(), "\n"))
	}
	// At the end, the status row is clear and the whole height is back.
	if last := string(sc.lines[rows-1]); strings.Contains(last, "hits,") || sc.bottom != rows-1 {
		t.Errorf("status row %q, scroll region to row %d after the end", last, sc.bottom+1)
	}
}

package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the line's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLineAfterDelay: a job shorter than the delay writes nothing; a
// longer one rewrites its line in place, then erases it.
func TestLineAfterDelay(t *testing.T) {
	var quick syncBuffer
	stop := start(&quick, time.Hour, time.Millisecond, func(time.Duration) string { return "reading" })
	stop()
	if quick.String() != "" {
		t.Errorf("a job done before the delay wrote %q", quick.String())
	}
	var slow syncBuffer
	stop = start(&slow, time.Millisecond, time.Millisecond, func(time.Duration) string { return "reading" })
	for i := 0; i < 200 && strings.Count(slow.String(), "reading") < 2; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	stop() // twice is once
	got := slow.String()
	if strings.Count(got, "\rreading\x1b[K") < 2 || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("a long job wrote %q, want its line rewritten at least twice, then erased", got)
	}
}

// TestNotATerminal: a pipe or a file gets no progress line.
func TestNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("a regular file is taken for a terminal")
	}
	Start(f, "gopahole", "x")()
	var b bytes.Buffer
	Start(&b, "gopahole", "x")()
	if st, _ := f.Stat(); st.Size() != 0 || b.Len() != 0 {
		t.Error("a progress line went to a file or a buffer")
	}
}

// TestTerminal: a pseudo-terminal is a terminal.
func TestTerminal(t *testing.T) {
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer f.Close()
	if !isTerminal(f) {
		t.Error("a pseudo-terminal is not taken for a terminal")
	}
}

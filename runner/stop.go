package runner

import (
	"fmt"
	"sync"
	"time"
)

// Stop says when a run of trace, stat or hist stops by itself, as
// bpftrace's exit() does: after Count hits (0: no limit) or after
// Duration (0: no limit), whichever comes first. A stop detaches every
// probe and prints what the run ends with; the probed process runs on
// unharmed. A command goprobe started runs on to its own end, and its
// exit status is goprobe's (SIGINT and SIGTERM are still forwarded to it).
type Stop struct {
	Count    uint64
	Duration time.Duration
}

// set reports whether s stops a run by itself.
func (s Stop) set() bool { return s.Count > 0 || s.Duration > 0 }

// stopper fires once, when the run's Stop is reached.
type stopper struct {
	Stop
	ch    chan struct{}
	once  sync.Once
	why   string
	timer *time.Timer
	quit  chan struct{}
}

// newStopper starts the Duration's clock.
func newStopper(s Stop) *stopper {
	st := &stopper{Stop: s, ch: make(chan struct{}), quit: make(chan struct{})}
	if s.Duration > 0 {
		st.timer = time.AfterFunc(s.Duration, func() { st.fire(fmt.Sprintf("stopped after %v", s.Duration)) })
	}
	return st
}

// fire stops the run, saying why.
func (s *stopper) fire(why string) {
	s.once.Do(func() {
		s.why = why
		close(s.ch)
	})
}

// done is closed when the run stops; nil when it never stops by itself.
func (s *stopper) done() <-chan struct{} {
	if !s.set() {
		return nil
	}
	return s.ch
}

// counted fires when n, the hits so far, reached Count.
func (s *stopper) counted(n uint64) {
	if s.Count > 0 && n >= s.Count {
		s.fire(fmt.Sprintf("stopped after %d hits", n))
	}
}

// watch polls total, the hits so far, until the Count is reached or the
// stopper ends (stat and hist count in the kernel: no event comes up).
func (s *stopper) watch(total func() uint64) {
	if s.Count == 0 {
		return
	}
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.ch:
				return
			case <-s.quit:
				return
			case <-t.C:
				s.counted(total())
			}
		}
	}()
}

// end stops the clock and the polling.
func (s *stopper) end() {
	if s.timer != nil {
		s.timer.Stop()
	}
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
}

// sum is the sum of v.
func sum(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}

package cli

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/binscope/binscope/probe"
)

// sessions are the probe sessions of one run: the first, and one more each
// time the probed file is replaced on disk. Each has a reader goroutine.
type sessions struct {
	mu    sync.Mutex
	all   []*probe.Session
	stop  chan struct{}
	wg    sync.WaitGroup
	print func(*probe.Session, *probe.Event)
	root  int // the command's process, for sessions that see only it and its descendants
}

func newSessions(stop chan struct{}, print func(*probe.Session, *probe.Event)) *sessions {
	return &sessions{stop: stop, print: print}
}

// add starts reading a session's events.
func (s *sessions) add(sess *probe.Session) {
	s.mu.Lock()
	s.all = append(s.all, sess)
	if s.root > 0 {
		sess.SetRoot(s.root)
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.stop:
				// Drain what the programs wrote before the end.
				for {
					e, err := sess.Read(time.Now().Add(time.Millisecond))
					if err != nil {
						return
					}
					s.print(sess, e)
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
			s.print(sess, e)
		}
	}()
}

// wait wakes the readers (stop is closed) and waits until they drained.
func (s *sessions) wait() {
	s.mu.Lock()
	for _, sess := range s.all {
		sess.Wake()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// counts sums the hits of each of n probes, and the drops, over sessions.
func (s *sessions) counts(n int) ([]uint64, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hits := make([]uint64, n)
	var dropped uint64
	for _, sess := range s.all {
		h, d, err := sess.Counts()
		if err != nil {
			continue
		}
		for i := range h {
			if i < n {
				hits[i] += h[i]
			}
		}
		dropped += d
	}
	return hits, dropped
}

// stackCounters sums the unwinders' counters (probe.UnwindStacks...).
func (s *sessions) stackCounters() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint64
	for _, sess := range s.all {
		c := sess.StackCounters()
		if out == nil {
			out = make([]uint64, len(c))
		}
		for i := range c {
			out[i] += c[i]
		}
	}
	return out
}

func (s *sessions) misses(n int) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]uint64, n)
	for _, sess := range s.all {
		for i, m := range sess.Misses() {
			if i < n {
				out[i] += m
			}
		}
	}
	return out
}

// setRoot names the command's process to every session (see
// probe.AttachOptions.Descendants), and to those added later.
func (s *sessions) setRoot(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.root = pid
	for _, sess := range s.all {
		sess.SetRoot(pid)
	}
}

// addProcess gives every session's unwinder process pid's mappings.
func (s *sessions) addProcess(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.all {
		sess.AddProcess(pid)
	}
}

// addDescendants gives the unwinders the mappings of the command's
// descendants the programs found (and again when they change).
func (s *sessions) addDescendants() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.all {
		for _, pid := range sess.Descendants() {
			for _, each := range s.all {
				each.AddProcess(pid)
			}
		}
	}
}

func (s *sessions) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.all {
		sess.Close()
	}
}

// fileID tells one file from another at the same path.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

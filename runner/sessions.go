package runner

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// attached is one attachment and the spec its events decode with.
type attached struct {
	spec *spec.Spec
	p    Probes
}

// sessions are the attachments of one run: the first, and one more each
// time the probed file is replaced on disk. Each has a reader goroutine
// that hands its events to print.
type sessions struct {
	mu     sync.Mutex
	all    []attached
	stop   chan struct{}
	wg     sync.WaitGroup
	print  func(*spec.Spec, Probes, *spec.Event)
	root   int // the command's process, for attachments that see only it and its descendants
	closed sync.Once
}

func newSessions(stop chan struct{}, print func(*spec.Spec, Probes, *spec.Event)) *sessions {
	return &sessions{stop: stop, print: print}
}

// add starts reading an attachment's events.
func (s *sessions) add(spec *spec.Spec, p Probes) {
	s.mu.Lock()
	s.all = append(s.all, attached{spec, p})
	if s.root > 0 {
		p.SetRoot(s.root)
	}
	s.mu.Unlock()
	s.wg.Go(func() { s.read(spec, p) })
}

func (s *sessions) read(spec *spec.Spec, p Probes) {
	for {
		select {
		case <-s.stop:
			// Drain what the programs wrote before the end.
			for {
				e, err := p.Read(time.Now().Add(time.Millisecond))
				if err != nil {
					return
				}
				s.print(spec, p, e)
			}
		default:
		}
		e, err := p.Read(time.Now().Add(20 * time.Millisecond))
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			return
		}
		s.print(spec, p, e)
	}
}

// each calls f with every attachment, holding the lock.
func (s *sessions) each(f func(Probes)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.all {
		f(a.p)
	}
}

// wait wakes the readers (stop is closed) and waits until they drained.
func (s *sessions) wait() {
	s.each(Probes.Wake)
	s.wg.Wait()
}

// counts sums the hits of each of n probes, and the drops, over the
// attachments.
func (s *sessions) counts(n int) ([]uint64, uint64) {
	hits := make([]uint64, n)
	var dropped uint64
	s.each(func(p Probes) {
		h, d, err := p.Counts()
		if err != nil {
			return
		}
		addTo(hits, h)
		dropped += d
	})
	return hits, dropped
}

// addTo adds v to sum, element by element, as far as sum goes.
func addTo(sum, v []uint64) {
	for i := range v {
		if i < len(sum) {
			sum[i] += v[i]
		}
	}
}

// grown is sum with v added, element by element, grown to v's length.
func grown(sum, v []uint64) []uint64 {
	if len(v) > len(sum) {
		sum = append(sum, make([]uint64, len(v)-len(sum))...)
	}
	addTo(sum, v)
	return sum
}

// misses sums the kernel's recursion misses of each of n probes.
func (s *sessions) misses(n int) []uint64 {
	out := make([]uint64, n)
	s.each(func(p Probes) { addTo(out, p.Misses()) })
	return out
}

// stackCounters sums the unwinders' counters (unwind.UnwindStacks...):
// every one, zero without stacks.
func (s *sessions) stackCounters() []uint64 {
	out := make([]uint64, unwind.UnwindNoTableStacks+1)
	s.each(func(p Probes) {
		out = grown(out, p.StackCounters())
	})
	return out
}

// stacks are the stacks each probe was hit with, over the attachments.
func (s *sessions) stacks(sym *stack.Symbolizer) (map[int][]stack.Stack, error) {
	byProbe := map[int][]stack.Stack{}
	var err error
	s.each(func(p Probes) {
		st, serr := p.Stacks(sym)
		if serr != nil {
			err = serr
			return
		}
		for i, s := range st {
			byProbe[i] = append(byProbe[i], s...)
		}
	})
	return byProbe, err
}

// setRoot names the command's process to every attachment (see
// attach.Options.Descendants), and to those added later.
func (s *sessions) setRoot(pid int) {
	s.mu.Lock()
	s.root = pid
	s.mu.Unlock()
	s.each(func(p Probes) { p.SetRoot(pid) })
}

// addProcess gives every attachment's unwinder process pid's mappings.
func (s *sessions) addProcess(pid int) {
	s.each(func(p Probes) { p.AddProcess(pid) })
}

// addDescendants gives the unwinders the mappings of the command's
// descendants the programs found (and again when they change).
func (s *sessions) addDescendants() {
	var pids []int
	s.each(func(p Probes) { pids = append(pids, p.Descendants()...) })
	for _, pid := range pids {
		s.addProcess(pid)
	}
}

// detach detaches every attachment; their counts stay readable.
func (s *sessions) detach() { s.each(Probes.Detach) }

// close detaches every attachment and releases it, once.
func (s *sessions) close() { s.closed.Do(func() { s.each(Probes.Close) }) }

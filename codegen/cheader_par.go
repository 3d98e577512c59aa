package codegen

import (
	"runtime"
	"strings"

	"github.com/binscope/binscope/internal/par"
	"github.com/binscope/binscope/types"
)

// Bodies rendered in parallel. The walk over the types (define, declare)
// fixes the order of the header and every name in it; the text of a named
// struct, its members and asserts, most of the header, needs only names
// given before it. So the walk leaves each such body's place in out and
// the bodies are rendered at the end on every core, each seeing the names
// given before its place, then put in their places.
// Speed: rendered serially, kernel BTF's header takes 1.25x the CPU (bash
// bench/ab.sh main . 11 gopahole /sys/kernel/btf/vmlinux --format=c).

// bodies is a header's state for deferred bodies.
type bodies struct {
	deferBodies bool
	// anonEnum: define met an anonymous enum inside the struct being
	// defined, whose enumerators the body names (in the walk's order).
	anonEnum bool
	jobs     []bodyJob
	// padsJob is the deferred job whose padding names pads should hold
	// (-1: pads holds them): a body the walk writes next (a typedef's
	// anonymous struct) takes names after them.
	padsJob int
	idle    *header // renders jobs while the walk waits (Idle)
	next    int     // the first job Idle has not rendered
	worker  bool    // renders jobs: reads infos, names nothing
	job     int     // the job being rendered
	bad     bool    // a body needed a name not given before its place
}

// bodyJob is a deferred body: its place in out, its struct, and its text
// when the walk needed it rendered early.
type bodyJob struct {
	at   int
	s    *types.Struct
	text string
	done bool
}

// deferBody leaves the place of s's definition in out.
func (h *header) deferBody(s *types.Struct) {
	h.jobs = append(h.jobs, bodyJob{at: h.out.Len(), s: s})
	h.padsJob, h.pads = len(h.jobs)-1, nil
}

// newWorker returns a header that renders h's deferred bodies: it shares
// h's names, read only, and has its own buffers and caches.
func (h *header) newWorker() *header {
	w := &header{infos: h.infos, floats: map[string]string{}, asserts: h.asserts}
	w.worker, w.padsJob = true, -1
	return w
}

// knownName is a worker's tagOf: the name t had when its job was deferred.
func (h *header) knownName(t types.Type) string {
	if in := h.known(t); in != nil {
		return in.name
	}
	return "_"
}

// known is t's typeInfo when t was named before h's job; else nil, and the
// job is bad.
func (h *header) known(t types.Type) *typeInfo {
	in := h.infos[t]
	if in == nil || !in.named || in.namedAt > h.job {
		h.bad = true
		return nil
	}
	return in
}

// renderNow renders the last deferred body during the walk, for the
// padding names it leaves in pads.
func (h *header) renderNow() {
	k := h.padsJob
	w := h.newWorker()
	w.job = k
	w.renderStruct(h.jobs[k].s)
	h.jobs[k].text, h.jobs[k].done = w.out.String(), true
	h.pads, h.padsJob = w.pads, -1
	h.merge(w)
}

// Idle renders the next deferred body, if any, in the goroutine that
// adds roots, while it waits for the next: false when there is none.
func (hw *HeaderWriter) Idle() bool {
	h := hw.h
	if h.next >= len(h.jobs) || h.err != nil {
		return false
	}
	if h.idle == nil {
		h.idle = h.newWorker()
		h.idle.out.Grow(1 << 22) // pages are touched as written
	}
	w, k := h.idle, h.next
	h.next++
	// One buffer for all: what a string of it holds stays as it grows.
	start := w.out.Len()
	w.job = k
	w.renderStruct(h.jobs[k].s)
	h.jobs[k].text, h.jobs[k].done = w.out.String()[start:], true
	return true
}

func (h *header) merge(w *header) {
	h.bad = h.bad || w.bad
	for n, d := range w.floats {
		h.floats[n] = d
	}
}

// renderBodies renders the deferred bodies on every core and returns the
// header's text in order: out with each body in its place.
func (h *header) renderBodies() []string {
	text, jobs := h.out.String(), h.jobs
	if len(jobs) == 0 {
		return []string{text}
	}
	size := max(64, (len(jobs)+15)/16) // jobs per part
	n := (len(jobs) + size - 1) / size
	parts := make([]string, n+1)
	// Each core renders with a worker of its own (buffers and caches),
	// taken from free for a part and given back after it.
	workers := make([]*header, min(runtime.GOMAXPROCS(0), n))
	free := make(chan *header, len(workers))
	for i := range workers {
		workers[i] = h.newWorker()
		free <- workers[i]
	}
	par.Each(n, 2, func(c int) {
		w := <-free
		lo, hi := c*size, min((c+1)*size, len(jobs))
		prev := 0
		if lo > 0 {
			prev = jobs[lo-1].at
		}
		w.out = strings.Builder{}
		w.out.Grow(jobs[hi-1].at - prev + 2048*(hi-lo)) // pages are touched as written
		for k := lo; k < hi; k++ {
			w.out.WriteString(text[prev:jobs[k].at])
			prev = jobs[k].at
			if jobs[k].done {
				w.out.WriteString(jobs[k].text)
				continue
			}
			w.job = k
			w.renderStruct(jobs[k].s)
		}
		parts[c] = w.out.String()
		free <- w
	})
	parts[n] = text[jobs[len(jobs)-1].at:]
	for _, w := range workers {
		h.merge(w)
	}
	if h.idle != nil {
		h.merge(h.idle)
	}
	return parts
}

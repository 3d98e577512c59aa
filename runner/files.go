package runner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

// part is one file of a run: its probes, which are the run's from
// offset on.
type part struct {
	target string
	defs   []string // the definitions as resolved for target
	spec   *spec.Spec
	offset int
}

// targetParts are the files a run probes and their probes: the one file
// of targetSpec, or each file a shell pattern in -x names ("./bin/app*",
// as bpftrace's usdt:./bin/app*:...), and the run's spec, whose probes
// are every file's in turn. With several files each probe's definition
// and function begin with its file ("bin/app2:usdt:tally:hit", a
// definition that names that file alone), so that counts, events and
// keys say which file; a file that has none of the probes is passed
// over, said on stderr. Errors: targetSpec's, or the first file's when
// no file has the probes.
func (o *Options) targetParts() ([]part, *spec.Spec, error) {
	files, err := o.partFiles()
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 1 {
		o.Exe = files[0]
	}
	if len(files) < 2 {
		target, s, err := o.targetSpec()
		if err != nil {
			return nil, nil, err
		}
		return []part{{target, o.Defs, s, 0}}, s, nil
	}
	if o.SpecFile != "" {
		return nil, nil, usage.Errorf("%s names %d files; --spec holds the probes of one build: name its file with -x", o.Exe, len(files))
	}
	kernel, err := o.kernelEvents() // attached once, with the first file
	if err != nil {
		return nil, nil, err
	}
	var parts []part
	var first error
	for _, f := range files {
		fo := *o
		fo.Exe = f
		target, s, err := fo.targetSpec()
		if errors.Is(err, types.ErrNotFound) {
			o.note("%s: passed over: %v", f, err)
			if first == nil {
				first = err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, part{target, fo.Defs, namedByFile(s, target), 0})
	}
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("none of the %d files (%s) has the probes: %w", len(files), strings.Join(files, ", "), first)
	}
	parts[0].spec = withKernelEvents(parts[0].spec, kernel)
	joined := *parts[0].spec
	joined.Binary, joined.BuildID, joined.Probes = o.Exe, "", nil
	for i := range parts {
		parts[i].offset = len(joined.Probes)
		joined.Probes = append(joined.Probes, parts[i].spec.Probes...)
	}
	return parts, &joined, nil
}

// partFiles are the files of a run over several: those the pattern in
// -x names, or without a file, a process or a command, those running
// processes map whose USDT notes hold the probes defined (usdtFiles).
// Fewer than two: a run of one file.
func (o *Options) partFiles() ([]string, error) {
	if files, ok := exeFiles(o.Exe); ok {
		return files, nil
	}
	if o.Exe != "" || len(o.Run) > 0 || o.PID > 0 || o.SpecFile != "" || defsBin(o.Defs) != "" {
		return nil, nil
	}
	return usdtFiles(o.Defs)
}

// namedByFile is s with each probe's definition and function prefixed
// by file.
func namedByFile(s *spec.Spec, file string) *spec.Spec {
	n := *s
	n.Probes = append([]spec.Probe(nil), s.Probes...)
	for i := range n.Probes {
		n.Probes[i].Def = file + ":" + n.Probes[i].Def
		n.Probes[i].Function = file + ":" + n.Probes[i].Function
	}
	return &n
}

// withPart is the run's spec with one part's probes, from offset on,
// taken from s (the file's replacement); s itself for a run of one file.
func withPart(all *spec.Spec, offset int, s *spec.Spec) *spec.Spec {
	if offset == 0 && len(s.Probes) >= len(all.Probes) {
		return s
	}
	n := *all
	n.Probes = append([]spec.Probe(nil), all.Probes...)
	copy(n.Probes[offset:], s.Probes)
	return &n
}

// shifted is one file's attachment among a run's: its probe indices are
// the run's from offset on (see targetParts).
type shifted struct {
	Probes
	offset int
}

// shift is p as the probes from offset on; p itself at 0.
func shift(p Probes, offset int) Probes {
	if offset == 0 {
		return p
	}
	return shifted{p, offset}
}

func (s shifted) pad(v []uint64) []uint64 {
	if v == nil {
		return nil
	}
	return append(make([]uint64, s.offset), v...)
}

func (s shifted) Read(deadline time.Time) (*spec.Event, error) {
	e, err := s.Probes.Read(deadline)
	if e != nil {
		e.Probe += s.offset
	}
	return e, err
}

func (s shifted) Counts() ([]uint64, uint64, error) {
	h, d, err := s.Probes.Counts()
	return s.pad(h), d, err
}

func (s shifted) Misses() []uint64 { return s.pad(s.Probes.Misses()) }

func (s shifted) Hist() ([]*spec.HistEntry, error) {
	es, err := s.Probes.Hist()
	for _, e := range es {
		e.Probe += s.offset
	}
	return es, err
}

func (s shifted) Stacks(sym *stack.Symbolizer) (map[int][]stack.Stack, error) {
	st, err := s.Probes.Stacks(sym)
	out := make(map[int][]stack.Stack, len(st))
	for i, v := range st {
		out[i+s.offset] = v
	}
	return out, err
}

// joined are the attachments of a run's files as one (hist's): counts
// summed, entries and stacks together, each call made to every one.
type joined []Probes

func (j joined) Read(time.Time) (*spec.Event, error) {
	return nil, errors.New("events of several files are read from each file's attachment")
}

func (j joined) Wake() {
	for _, p := range j {
		p.Wake()
	}
}

func (j joined) Counts() ([]uint64, uint64, error) {
	var hits []uint64
	var dropped uint64
	for _, p := range j {
		h, d, err := p.Counts()
		if err != nil {
			return nil, 0, err
		}
		hits = grown(hits, h)
		dropped += d
	}
	return hits, dropped, nil
}

func (j joined) Misses() []uint64 {
	var out []uint64
	for _, p := range j {
		out = grown(out, p.Misses())
	}
	return out
}

func (j joined) Hist() ([]*spec.HistEntry, error) {
	var all []*spec.HistEntry
	for _, p := range j {
		es, err := p.Hist()
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	return all, nil
}

func (j joined) SetRoot(pid int) error {
	var first error
	for _, p := range j {
		if err := p.SetRoot(pid); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (j joined) Descendants() []int {
	var out []int
	for _, p := range j {
		out = append(out, p.Descendants()...)
	}
	return out
}

func (j joined) AddProcess(pid int) error {
	var first error
	for _, p := range j {
		if err := p.AddProcess(pid); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (j joined) StackCounters() []uint64 {
	var out []uint64
	for _, p := range j {
		out = grown(out, p.StackCounters())
	}
	return out
}

func (j joined) Stacks(sym *stack.Symbolizer) (map[int][]stack.Stack, error) {
	out := map[int][]stack.Stack{}
	for _, p := range j {
		st, err := p.Stacks(sym)
		if err != nil {
			return nil, err
		}
		for i, s := range st {
			out[i] = append(out[i], s...)
		}
	}
	return out, nil
}

func (j joined) UserFrames(sym *stack.Symbolizer, pid int, ips []uint64) []stack.Frame {
	return j[0].UserFrames(sym, pid, ips)
}

func (j joined) Detach() {
	for _, p := range j {
		p.Detach()
	}
}

func (j joined) Close() {
	for _, p := range j {
		p.Close()
	}
}

// attachParts attaches each part with attach (Kernel.Attach or
// AttachHist), each shifted to its offset; on an error, those attached
// are closed.
func attachParts(parts []part, attach func(int, part) (Probes, error)) ([]Probes, error) {
	var ps []Probes
	for i, pt := range parts {
		p, err := attach(i, pt)
		if err != nil {
			joined(ps).Close()
			return nil, err
		}
		ps = append(ps, shift(p, pt.offset))
	}
	return ps, nil
}

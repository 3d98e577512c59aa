package attach

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// Session is a spec's programs loaded and attached to a file. Close
// detaches everything; nothing stays attached after it.
type Session struct {
	Spec *spec.Spec
	// unwinder keeps the stack unwinder's tables, with stacks.
	*unwinder
	coll  *ebpf.Collection
	links []link.Link
	rd    *ringbuf.Reader
	// progs names, per probe, the programs its sites run (sites with
	// the same code share one).
	progs [][]string
}

// permissionError is ErrPermission for what the kernel refused, in one
// line that says what to do and the kernel settings that decide it.
func permissionError(what string) error {
	return &permError{what}
}

type permError struct{ what string }

func (e *permError) Unwrap() error { return ErrPermission }

func (e *permError) Error() string {
	setting := func(name string) string {
		b, err := os.ReadFile("/proc/sys/kernel/" + name)
		if err != nil {
			return "kernel." + name + " unknown"
		}
		return "kernel." + name + "=" + strings.TrimSpace(string(b))
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "goprobe"
	}
	return fmt.Sprintf("the kernel refused to %s: run as root, or grant CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep %s); %s; %s, %s",
		e.what, exe, capabilities(), setting("unprivileged_bpf_disabled"), setting("perf_event_paranoid"))
}

// capabilities says which of the capabilities BPF needs this process has.
func capabilities() string {
	const sysAdmin, perfmon, bpf = 21, 38, 39
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "capabilities unknown"
	}
	var eff uint64
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			eff, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	switch {
	case has(sysAdmin):
		return "this process has CAP_SYS_ADMIN"
	case has(bpf) && has(perfmon):
		return "this process has CAP_BPF and CAP_PERFMON"
	case has(bpf):
		return "this process has CAP_BPF but not CAP_PERFMON"
	case has(perfmon):
		return "this process has CAP_PERFMON but not CAP_BPF"
	}
	return fmt.Sprintf("this process (uid %d) has neither", os.Geteuid())
}

// Probes loads the programs of s and attaches each at its site's file
// offset in target (the file s was made from, or a copy with the same
// build-id).
func Probes(s *spec.Spec, target string, opts *Options) (*Session, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Stacks != bpfprog.NoStacks && o.Tables == nil {
		a, err := arch.ForName(s.Arch)
		if err != nil {
			return nil, err
		}
		o.Tables = stack.NewTables(a)
	}
	if o.Object != "" {
		return attach(s, target, o, func(*spec.Spec, bool) (*ebpf.CollectionSpec, error) {
			cs, err := ebpf.LoadCollectionSpec(o.Object)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", o.Object, err)
			}
			return cs, nil
		})
	}
	return attach(s, target, o, func(s *spec.Spec, multi bool) (*ebpf.CollectionSpec, error) {
		rows := 0
		if o.Tables != nil {
			rows = len(o.Tables.Rows) + 1<<16
		}
		return bpfprog.Programs(s, &bpfprog.ProgramOptions{Stacks: o.Stacks, StackDepth: o.StackDepth, RowCapacity: rows, Events: o.Events, SiteCookie: multi})
	})
}

func attach(s *spec.Spec, target string, o Options, build func(s *spec.Spec, multi bool) (*ebpf.CollectionSpec, error)) (_ *Session, err error) {
	pid := o.PID
	// A uprobe_multi link (Linux 6.6) attaches many sites at once and
	// detaches in a few milliseconds; a perf-event uprobe waits tens of
	// milliseconds for the kernel's grace period, per site.
	multi := features.HaveBPFLinkUprobeMulti() == nil
	cs, err := build(s, multi)
	if err != nil {
		return nil, err
	}
	bpfprog.KernelSites(cs, s, pid)
	if o.Descendants || o.KernelDescendants {
		off, err := KernelTaskOffsets()
		if err != nil {
			return nil, err
		}
		var only func(*ebpf.ProgramSpec) bool
		if !o.Descendants {
			only = func(p *ebpf.ProgramSpec) bool { return p.Type == ebpf.TracePoint }
		}
		bpfprog.DescendantFilter(cs, off, only)
	}
	if multi {
		for _, p := range cs.Programs {
			if p.Type == ebpf.Kprobe {
				p.AttachType = ebpf.AttachTraceUprobeMulti
			}
		}
	}
	// An object's programs carry relocations their instructions do not
	// show: each keeps its site.
	groups, err := groupSites(cs, s, multi && o.Object == "")
	if err != nil {
		return nil, err
	}
	coll, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: o.Types}})
	if err != nil {
		return nil, loadError(err)
	}
	ss := &Session{Spec: s, coll: coll, progs: make([][]string, len(s.Probes))}
	defer func() {
		if err != nil {
			ss.Close()
		}
	}()
	if o.Stacks != bpfprog.NoStacks {
		if ss.unwinder, err = newUnwinder(coll, o.Tables); err != nil {
			return nil, err
		}
		// The process probes are limited to unwinds with its tables
		// from its first hit, not by frame pointer until the caller
		// adds it after attaching.
		if pid > 0 {
			ss.unwinder.AddProcess(pid)
		}
	}
	var ex *link.Executable
	// The kernel puts each program attached to a uprobe at the head of
	// that uprobe's list of consumers (kernel/events/uprobes.c), so the
	// last attached runs first: attaching from the last probe to the
	// first, two probes of one site run in the order they were given.
	for k := len(groups) - 1; k >= 0; k-- {
		g := groups[k]
		ss.progs[g.probe] = append(ss.progs[g.probe], g.prog)
		p, prog := s.Probes[g.probe], coll.Programs[g.prog]
		if prog == nil {
			return nil, fmt.Errorf("%s: no program %s for site %d of %s", o.Object, g.prog, g.sites[0].j, p.Def)
		}
		if site := p.Sites[g.sites[0].j]; site.Kind == spec.SiteTracepoint {
			group, name, _ := strings.Cut(site.Function, ":")
			l, err := link.Tracepoint(group, name, prog, nil)
			if err != nil {
				return nil, fmt.Errorf("attaching tracepoint %s: %v", site.Function, err)
			}
			ss.links = append(ss.links, l)
			continue
		}
		if ex == nil {
			if ex, err = link.OpenExecutable(target); err != nil {
				return nil, err
			}
		}
		l, err := g.attach(ex, s, prog, pid, multi)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil, permissionError("attach a uprobe")
			}
			return nil, fmt.Errorf("%s: attaching %s: %v", target, p.Def, err)
		}
		ss.links = append(ss.links, l)
	}
	if m := coll.Maps["events"]; m != nil {
		if ss.rd, err = ringbuf.NewReader(m); err != nil {
			return nil, err
		}
	}
	return ss, nil
}

// Read returns the next event, waiting until deadline; it returns
// os.ErrDeadlineExceeded when none came.
func (s *Session) Read(deadline time.Time) (*spec.Event, error) {
	if s.rd == nil {
		return nil, ErrNoEvents
	}
	s.rd.SetDeadline(deadline)
	rec, err := s.rd.Read()
	if err != nil {
		return nil, err
	}
	return s.Spec.Decode(rec.RawSample)
}

// Wake makes a Read waiting in another goroutine return at once.
func (s *Session) Wake() {
	if s.rd != nil {
		s.rd.SetDeadline(time.Now())
	}
}

// Counts returns the hits of each probe and the records the ring buffer
// had no room for.
func (s *Session) Counts() (hits []uint64, dropped uint64, err error) {
	if s.coll == nil {
		return nil, 0, errClosed
	}
	m := s.coll.Maps["counts"]
	for i := range s.Spec.Probes {
		var n uint64
		if err := m.Lookup(uint32(i), &n); err != nil {
			return nil, 0, err
		}
		hits = append(hits, n)
	}
	err = m.Lookup(uint32(len(s.Spec.Probes)), &dropped)
	return hits, dropped, err
}

// Misses returns, per probe, the hits its programs missed because another
// BPF program was running on the CPU (the kernel's recursion misses).
func (s *Session) Misses() []uint64 {
	out := make([]uint64, len(s.Spec.Probes))
	if s.coll == nil {
		return out
	}
	for i, names := range s.progs {
		for _, name := range names {
			if prog := s.coll.Programs[name]; prog != nil {
				if st, err := prog.Stats(); err == nil {
					out[i] += st.RecursionMisses
				}
			}
		}
	}
	return out
}

// Detach detaches every probe: no program runs from then on, and the
// counts and aggregates stay readable until Close.
func (s *Session) Detach() {
	closeLinks(s.links)
	s.links = nil
}

// Close detaches every probe and unloads the programs.
func (s *Session) Close() {
	s.Detach()
	if s.rd != nil {
		s.rd.Close()
		s.rd = nil
	}
	if s.coll != nil {
		s.coll.Close()
		s.coll = nil
	}
}

// errClosed is what a closed session's counters return.
var errClosed = errors.New("the probes are detached")

// Hist is Probes for aggregation: the spec's probes (a key and an
// optional value each) fill the "hist" map instead of sending events.
func Hist(s *spec.Spec, target string, opts *Options) (*Session, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	return attach(s, target, o, func(s *spec.Spec, _ bool) (*ebpf.CollectionSpec, error) {
		return bpfprog.HistPrograms(s)
	})
}

// Descendants lists the processes the programs found to descend from the
// root so far (see Options.Descendants).
func (s *Session) Descendants() []int {
	if s.coll == nil {
		return nil
	}
	m := s.coll.Maps["desc_seen"]
	if m == nil {
		return nil
	}
	var out []int
	var pid, v uint32
	it := m.Iterate()
	for it.Next(&pid, &v) {
		if v == 1 {
			out = append(out, int(pid))
		}
	}
	return out
}

// SetRoot names the process whose descendants (and itself) the probes of
// a session attached with Descendants see.
func (s *Session) SetRoot(pid int) error { return setRoot(s.coll, pid) }

// rootKey is the "desc_root" map's one key.
var rootKey = uint32(0)

func setRoot(coll *ebpf.Collection, pid int) error {
	if coll == nil {
		return errClosed
	}
	m := coll.Maps["desc_root"]
	if m == nil {
		return nil
	}
	if err := m.Put(rootKey, uint32(pid)); err != nil {
		return fmt.Errorf("setting the command's process: %v", err)
	}
	return nil
}

// Stacks reads the hits counted per stack (bpfprog.CountStacks), by probe, with
// their frames named outermost first.
func (s *Session) Stacks(sym *stack.Symbolizer) (map[int][]stack.Stack, error) {
	if s.coll == nil {
		return nil, errClosed
	}
	m := s.coll.Maps["stacks"]
	if m == nil || s.unwinder == nil {
		return nil, errors.New("not a session that counts stacks")
	}
	out := map[int][]stack.Stack{}
	key := make([]byte, unwind.KeySize)
	var n uint64
	it := m.Iterate()
	for it.Next(&key, &n) {
		k, err := unwind.DecodeKey(key)
		if err != nil {
			return nil, err
		}
		out[int(k.Aux)] = append(out[int(k.Aux)], stack.Stack{Frames: s.UserFrames(sym, int(k.Pid), k.IPs), Count: n})
	}
	return out, it.Err()
}

// StackCounters returns the unwinder's counters (unwind.UnwindStacks...).
func (s *Session) StackCounters() []uint64 { return unwindCounts(s.coll) }

// Hist reads the aggregates so far.
func (s *Session) Hist() ([]*spec.HistEntry, error) {
	if s.coll == nil {
		return nil, errClosed
	}
	m := s.coll.Maps["hist"]
	if m == nil {
		return nil, errors.New("not an aggregation session")
	}
	var out []*spec.HistEntry
	key, val := make([]byte, spec.HistKeySize), make([]byte, spec.HistValueSize)
	it := m.Iterate()
	for it.Next(&key, &val) {
		e, err := s.Spec.DecodeHist(key, val)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, it.Err()
}

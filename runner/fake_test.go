package runner

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// fakeKernel attaches fakeProbes and starts commands without the exec
// gate: the orchestration runs without root. It records what the run
// asked of it.
type fakeKernel struct {
	mu       sync.Mutex
	attached []*fakeProbes
	specs    []*spec.Spec
	targets  []string
	opts     []attach.Options
	started  []int
	// events are handed out by the attachment of the same index.
	events [][]*spec.Event
	// hits is each attachment's count of every probe.
	hits []uint64
	// descendants is what every attachment's Descendants says.
	descendants []int
	// ended, when not 0, makes Start fail as a command whose loader
	// failed with that status.
	ended int
	// profile is what StartProfile hands out, with the options it got.
	profile     *fakeProfiler
	profileOpts []bpfprog.ProfileOptions
}

// StartProfile hands out k.profile.
func (k *fakeKernel) StartProfile(_ *stack.Tables, o *bpfprog.ProfileOptions) (Profiler, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.profileOpts = append(k.profileOpts, *o)
	return k.profile, nil
}

// TaskOffsets are made up: the fakes read no task_struct.
func (k *fakeKernel) TaskOffsets() (bpfprog.TaskOffsets, error) {
	return bpfprog.TaskOffsets{RealParent: 1, Tgid: 2}, nil
}

// fakeProfiler counts its stacks once and records the processes it was
// told about.
type fakeProfiler struct {
	mu      sync.Mutex
	stacks  []stack.Stack
	roots   []int
	added   []int
	stopped bool
	closed  bool
}

func (p *fakeProfiler) AddProcess(pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.added = append(p.added, pid)
	return nil
}

func (p *fakeProfiler) SetRoot(pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = append(p.roots, pid)
	return nil
}

func (p *fakeProfiler) Refresh()                                        {}
func (p *fakeProfiler) Stop()                                           { p.stopped = true }
func (p *fakeProfiler) Close()                                          { p.closed = true }
func (p *fakeProfiler) Stacks(*stack.Symbolizer) ([]stack.Stack, error) { return p.stacks, nil }
func (p *fakeProfiler) RawStacks() ([]unwind.Raw, error)                { return nil, nil }
func (p *fakeProfiler) Mappings(int) []stack.Mapping                    { return nil }
func (p *fakeProfiler) Counters() []uint64                              { return make([]uint64, unwind.UnwindCounters) }
func (p *fakeProfiler) BytesRead() uint64                               { return 0 }

func (k *fakeKernel) Attach(s *spec.Spec, target string, o *attach.Options) (Probes, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := &fakeProbes{hits: k.hits, desc: k.descendants}
	if i := len(k.attached); i < len(k.events) {
		p.events = append(p.events, k.events[i]...)
	}
	k.attached = append(k.attached, p)
	k.specs = append(k.specs, s)
	k.targets = append(k.targets, target)
	k.opts = append(k.opts, *o)
	return p, nil
}

func (k *fakeKernel) AttachHist(s *spec.Spec, target string, o *attach.Options) (Probes, error) {
	return k.Attach(s, target, o)
}

// Start starts c and calls the hooks once it runs (the real gate calls
// them before its first instruction).
func (k *fakeKernel) Start(c *exec.Cmd, h attach.GateHooks) (*exec.Cmd, error) {
	if k.ended != 0 {
		return nil, &attach.EndedError{Status: k.ended}
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.started = append(k.started, c.Process.Pid)
	k.mu.Unlock()
	if h.Exec != nil {
		h.Exec(c.Process.Pid)
	}
	if h.Loaded != nil {
		h.Loaded(c.Process.Pid)
	}
	return c, nil
}

func (k *fakeKernel) attachments() []*fakeProbes {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*fakeProbes(nil), k.attached...)
}

// fakeProbes is one attachment: it hands out its events and records the
// processes it was told about.
type fakeProbes struct {
	mu     sync.Mutex
	events []*spec.Event
	hits   []uint64
	desc   []int
	roots  []int
	added  []int
	closed bool
}

func (p *fakeProbes) Read(deadline time.Time) (*spec.Event, error) {
	p.mu.Lock()
	if len(p.events) > 0 {
		e := p.events[0]
		p.events = p.events[1:]
		p.mu.Unlock()
		return e, nil
	}
	p.mu.Unlock()
	time.Sleep(time.Until(deadline))
	return nil, os.ErrDeadlineExceeded
}

func (p *fakeProbes) Wake()                                                   {}
func (p *fakeProbes) Counts() ([]uint64, uint64, error)                       { return p.hits, 0, nil }
func (p *fakeProbes) Misses() []uint64                                        { return nil }
func (p *fakeProbes) Hist() ([]*spec.HistEntry, error)                        { return nil, nil }
func (p *fakeProbes) StackCounters() []uint64                                 { return nil }
func (p *fakeProbes) Stacks(*stack.Symbolizer) (map[int][]stack.Stack, error) { return nil, nil }

func (p *fakeProbes) UserFrames(_ *stack.Symbolizer, _ int, ips []uint64) []stack.Frame {
	var fs []stack.Frame
	for _, ip := range ips {
		fs = append(fs, stack.Frame{Name: "fn" + string(rune('A'+ip)), Module: "prog"})
	}
	return fs
}

func (p *fakeProbes) SetRoot(pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roots = append(p.roots, pid)
	return nil
}

func (p *fakeProbes) Descendants() []int { return p.desc }

func (p *fakeProbes) AddProcess(pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.added = append(p.added, pid)
	return nil
}

func (p *fakeProbes) Detach() {}

func (p *fakeProbes) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

func (p *fakeProbes) seen() (roots, added []int, closed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.roots...), append([]int(nil), p.added...), p.closed
}

// buildC compiles a C program with gcc -O2 -g into dir/name.
func buildC(t *testing.T, dir, name, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-O2", "-g", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// workC calls work(i) n times; pad, when not "", is a function placed
// before work, so that work's address differs between builds.
func workC(pad string) string {
	return `#include <stdio.h>
#include <stdlib.h>
` + pad + `
__attribute__((noinline)) int work(int n) { return n * 3 + 1; }
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1, s = 0;
	for (int i = 0; i < n; i++)
		s += work(i);
	printf("%d\n", s);
	return 0;
}
`
}

const padC = `__attribute__((noinline)) int pad(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i ^ n; return s; }`

// symbolAddr is name's value in bin's symbol table (the oracle for where
// its entry site must be).
func symbolAddr(t *testing.T, bin, name string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value
		}
	}
	t.Fatalf("%s: no function symbol %s", bin, name)
	return 0
}

// entrySites are the addresses of spec's entry sites of its first probe.
func entrySites(spec *spec.Spec) []uint64 {
	var out []uint64
	for _, s := range spec.Probes[0].Sites {
		out = append(out, s.Addr)
	}
	return out
}

package attach

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// Profile is a CPU sampling session: a perf event per CPU running the
// "profile" program, which unwinds the sampled process's user stack with
// the session's tables and counts each distinct stack.
type Profile struct {
	*unwinder
	coll   *ebpf.Collection
	links  []link.Link
	events []int
	all    bool
	// newProcs reports the descendants the program finds; followNew
	// reads it until done.
	newProcs  *ringbuf.Reader
	done      chan struct{}
	bytesRead uint64
}

// BytesRead counts what Stacks copied out of the kernel: the profile's
// whole transfer to user space.
func (p *Profile) BytesRead() uint64 { return p.bytesRead }

// unwinder is the user-space side of the stack unwinder: it keeps the
// kernel's rows and processes in step with the processes' mappings.
type unwinder struct {
	rows, procs *ebpf.Map
	tables      *stack.Tables

	mu      sync.Mutex
	synced  int                     // rows written to the kernel
	maps    map[int][]stack.Mapping // each process's mappings, as last read
	rawMaps map[int][]byte          // /proc/PID/maps as last read
}

func newUnwinder(coll *ebpf.Collection, tables *stack.Tables) (*unwinder, error) {
	u := &unwinder{rows: coll.Maps["unwind_rows"], procs: coll.Maps["unwind_procs"], tables: tables,
		maps: map[int][]stack.Mapping{}, rawMaps: map[int][]byte{}}
	if err := u.syncRows(); err != nil {
		return nil, err
	}
	// Processes not added unwind by frame pointer.
	return u, u.procs.Put(uint32(0), make([]byte, unwind.ProcValueSize))
}

// StartProfile loads the sampling program with tables (holding the rows
// of the files the processes will map, for the table's size) and starts
// sampling every CPU.
func StartProfile(tables *stack.Tables, opts *bpfprog.ProfileOptions) (_ *Profile, err error) {
	o := opts.WithDefaults()
	o.RowCapacity = len(tables.Rows) + 1<<16
	cs, err := bpfprog.ProfileCollection(tables.Arch(), o)
	if err != nil {
		return nil, err
	}
	coll, err := ebpf.NewCollection(cs)
	if err != nil {
		return nil, loadError(err)
	}
	p := &Profile{coll: coll, all: o.All}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.unwinder, err = newUnwinder(coll, tables); err != nil {
		return nil, err
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	for _, cpu := range cpus {
		attr := unix.PerfEventAttr{
			Type:   unix.PERF_TYPE_SOFTWARE,
			Config: unix.PERF_COUNT_SW_CPU_CLOCK,
			Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Sample: uint64(o.Hz),
			Bits:   unix.PerfBitFreq,
		}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
				return nil, permissionError("open a perf event")
			}
			return nil, fmt.Errorf("perf_event_open on CPU %d: %v", cpu, err)
		}
		p.events = append(p.events, fd)
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: coll.Programs["profile"], Attach: ebpf.AttachPerfEvent})
		if err != nil {
			return nil, fmt.Errorf("attaching the sampling program on CPU %d: %v", cpu, err)
		}
		p.links = append(p.links, l)
	}
	if m := coll.Maps["new_procs"]; m != nil {
		if p.newProcs, err = ringbuf.NewReader(m); err != nil {
			return nil, err
		}
		p.done = make(chan struct{})
		go p.followNew()
	}
	return p, nil
}

// followNew gives the unwinder the mappings of each descendant the
// program reports.
func (p *Profile) followNew() {
	defer close(p.done)
	for {
		rec, err := p.newProcs.Read()
		if err != nil {
			return // closed
		}
		if len(rec.RawSample) >= 4 {
			p.AddProcess(int(binary.LittleEndian.Uint32(rec.RawSample)))
		}
	}
}

// SetRoot names the process whose descendants a profile with
// Descendants samples too.
func (p *Profile) SetRoot(pid int) error { return setRoot(p.coll, pid) }

func loadError(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return permissionError("load BPF programs")
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("the kernel refused a generated program: %v", ve)
	}
	return err
}

// syncRows writes the rows the kernel does not have yet, as far as the
// table's capacity allows; files beyond it unwind by frame pointer.
func (u *unwinder) syncRows() error {
	n := min(len(u.tables.Rows), int(u.rows.MaxEntries()))
	if n <= u.synced {
		return nil
	}
	keys := make([]uint32, 0, n-u.synced)
	for i := u.synced; i < n; i++ {
		keys = append(keys, uint32(i))
	}
	if _, err := u.rows.BatchUpdate(keys, u.tables.Rows[u.synced:n], nil); err != nil {
		for i := u.synced; i < n; i++ {
			if err := u.rows.Put(uint32(i), u.tables.Rows[i]); err != nil {
				return err
			}
		}
	}
	u.synced = n
	return nil
}

// AddProcess samples process pid (when not profiling every process) and
// gives the unwinder its mappings; called again, it re-reads them when
// /proc/PID/maps changed (an exec, a dlopen).
func (u *unwinder) AddProcess(pid int) error {
	if u == nil {
		return errors.New("the session takes no stacks")
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if old, ok := u.rawMaps[pid]; ok && bytes.Equal(old, raw) {
		return nil
	}
	u.rawMaps[pid] = raw
	ms, err := stack.ProcMappings(pid)
	if err != nil {
		return err
	}
	v := u.tables.ProcValue(ms)
	if err := u.syncRows(); err != nil {
		return err
	}
	// A file whose rows did not fit the kernel's table unwinds by frame
	// pointer: it leaves the process's list.
	for m := 0; m < unwind.MaxModules; m++ {
		o := m * unwind.ModuleSize
		if hi := binary.LittleEndian.Uint64(v[o+24:]) >> 32; hi > uint64(u.synced) {
			clear(v[o : o+unwind.ModuleSize])
		}
	}
	if len(ms) > 0 {
		u.maps[pid] = ms
	}
	return u.procs.Put(uint32(pid), v)
}

// Refresh re-reads the mappings of every process added (an exec, a
// dlopen change them), forgetting those that are gone.
func (u *unwinder) Refresh() {
	if u == nil {
		return
	}
	u.mu.Lock()
	pids := make([]int, 0, len(u.rawMaps))
	for pid := range u.rawMaps {
		pids = append(pids, pid)
	}
	u.mu.Unlock()
	for _, pid := range pids {
		if u.AddProcess(pid) != nil {
			u.mu.Lock()
			delete(u.rawMaps, pid)
			u.mu.Unlock()
		}
	}
}

// mappings are process pid's mappings as last read, or read now (a
// process the session did not add).
func (u *unwinder) mappings(pid int) []stack.Mapping {
	u.mu.Lock()
	defer u.mu.Unlock()
	ms, ok := u.maps[pid]
	if !ok {
		ms, _ = stack.ProcMappings(pid)
		u.maps[pid] = ms
	}
	return ms
}

// UserFrames names a user stack (innermost first) of process pid,
// outermost frame first.
func (u *unwinder) UserFrames(sym *stack.Symbolizer, pid int, ips []uint64) []stack.Frame {
	if u == nil {
		return nil
	}
	return sym.UserStack(u.mappings(pid), ips)
}

// Counters returns the unwinder's counters (unwind.UnwindStacks...).
func (p *Profile) Counters() []uint64 { return unwindCounts(p.coll) }

func unwindCounts(coll *ebpf.Collection) []uint64 {
	out := make([]uint64, unwind.UnwindCounters)
	if coll == nil {
		return out
	}
	if m := coll.Maps["unwind_counts"]; m != nil {
		for i := range out {
			m.Lookup(uint32(i), &out[i])
		}
	}
	return out
}

// Stop stops sampling; the counts stay readable until Close.
func (p *Profile) Stop() {
	for _, l := range p.links {
		l.Close()
	}
	p.links = nil
	for _, fd := range p.events {
		unix.Close(fd)
	}
	p.events = nil
	if p.newProcs != nil {
		p.newProcs.Close()
		<-p.done
		p.newProcs = nil
	}
}

// Close stops sampling and frees everything.
func (p *Profile) Close() {
	p.Stop()
	if p.coll != nil {
		p.coll.Close()
	}
}

// Stacks reads the counted stacks and names their frames, outermost
// first: user frames with their inline expansions, then kernel frames.
// Processes are named by their first frame when every process is
// profiled.
func (p *Profile) Stacks(sym *stack.Symbolizer) ([]stack.Stack, error) {
	var out []stack.Stack
	key, kips := make([]byte, unwind.KeySize), make([]uint64, 127)
	var n uint64
	it := p.coll.Maps["stacks"].Iterate()
	for it.Next(&key, &n) {
		k, err := unwind.DecodeKey(key)
		if err != nil {
			return nil, err
		}
		p.bytesRead += unwind.KeySize + 8
		var frames []stack.Frame
		if p.all {
			frames = append(frames, stack.Frame{Name: procName(int(k.Pid))})
		}
		frames = append(frames, p.UserFrames(sym, int(k.Pid), k.IPs)...)
		if k.Aux >= 0 && p.coll.Maps["kstacks"].Lookup(uint32(k.Aux), &kips) == nil {
			p.bytesRead += 8 * uint64(len(kips))
			var ks []stack.Frame
			for _, ip := range kips {
				if ip == 0 {
					break
				}
				ks = append(ks, sym.Kernel(ip))
			}
			for i := len(ks) - 1; i >= 0; i-- {
				frames = append(frames, ks[i])
			}
		}
		out = append(out, stack.Stack{Frames: frames, Count: n})
	}
	return out, it.Err()
}

func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return strconv.Itoa(pid)
	}
	return strings.TrimSpace(string(b))
}

// onlineCPUs parses /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("/sys/devices/system/cpu/online: %q", b)
		}
		z := a
		if found {
			if z, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("/sys/devices/system/cpu/online: %q", b)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

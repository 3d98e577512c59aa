// Package bpfprog compiles specs into BPF programs with cilium/ebpf's asm,
// no compiler involved: per site, a program that counts the hit and reads
// its arguments along the spec's fetch chains into the record package
// spec lays out (Programs); the in-kernel histograms (HistPrograms); the
// filter that keeps a command's processes (DescendantFilter); the CPU
// profiler's sampling program (ProfileCollection). Programs that take
// stacks include package stack's unwinder. Loading and attaching is
// package attach's.
package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/unwind"
)

// StackMode says what the programs do with the user stack at each hit.
type StackMode int

const (
	NoStacks    StackMode = iota
	CountStacks           // count the hits of each probe per distinct stack ("stacks")
	EventStacks           // append the stack to every event
)

// ProgramOptions tune Programs. A nil *ProgramOptions means the defaults.
type ProgramOptions struct {
	Stacks StackMode
	// StackDepth bounds the frames a site unwinds, 1 to unwind.SiteDepth
	// (0: unwind.SiteDepth).
	StackDepth int
	// RowCapacity sizes the unwind table with Stacks (default 65536 rows).
	RowCapacity int
	// Events makes a site without arguments send an event for each hit
	// too (trace prints one line per call; stat only counts).
	Events bool
	// SiteCookie makes a record's site index the attach cookie
	// (bpf_get_attach_cookie) instead of a constant, so that sites whose
	// code is otherwise the same share one program and one link (see
	// Identity).
	SiteCookie bool
}

// Programs builds the BPF programs of a spec with cilium/ebpf's asm, no
// compiler involved: program pI_sJ for site J of probe I, a "counts" array
// (one u64 per probe, then one for records the ring buffer had no room
// for) and an "events" ring buffer; with stacks, the unwinder's maps.
func Programs(s *spec.Spec, opts *ProgramOptions) (*ebpf.CollectionSpec, error) {
	var o ProgramOptions
	if opts != nil {
		o = *opts
	}
	if o.StackDepth <= 0 || o.StackDepth > unwind.SiteDepth {
		o.StackDepth = unwind.SiteDepth
	}
	a, cs, err := baseCollection(s)
	if err != nil {
		return nil, err
	}
	if o.Stacks != NoStacks {
		if err := unwind.CheckArch(a); err != nil {
			return nil, err
		}
		if o.RowCapacity <= 0 {
			o.RowCapacity = 1 << 16
		}
		unwind.UnwindMaps(cs, o.RowCapacity, 1<<14)
	}
	// Maps cost time to create (the kernel allocates them whole): only
	// those the probes use.
	events, captures := false, false
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			events = events || (len(site.Args) > 0 || o.Stacks == EventStacks || o.Events) && site.Kind != spec.SiteCapture && site.Kind != spec.SiteClear
			captures = captures || site.Kind == spec.SiteCapture
		}
	}
	addMarks(cs, s)
	if events {
		cs.Maps["events"] = &ebpf.MapSpec{Name: "events", Type: ebpf.RingBuf, MaxEntries: spec.RingBytes}
	}
	if captures {
		// Values saved at entry for return sites, keyed by {goroutine or
		// thread, probe}; LRU, so that calls that never return (a panic,
		// a goroutine that exits) cannot fill it.
		cs.Maps["captures"] = &ebpf.MapSpec{Name: "captures", Type: ebpf.LRUHash, KeySize: 16, ValueSize: 8 * spec.MaxArgs, MaxEntries: 1 << 12}
		cs.Maps["scratch"] = &ebpf.MapSpec{Name: "scratch", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8 * spec.MaxArgs, MaxEntries: 1}
	}
	for i, p := range s.Probes {
		for j, site := range p.Sites {
			typ, stacks := ebpf.Kprobe, o.Stacks
			if site.Kind == spec.SiteTracepoint {
				// A tracepoint's context is its record, not the user's
				// registers: no user stack to unwind from it.
				typ, stacks = ebpf.TracePoint, NoStacks
			}
			insns, err := siteProgram(a, i, j, len(s.Probes), site, p.CaptureKey, stacks, o.StackDepth, o.Events || o.Stacks == EventStacks, o.SiteCookie)
			if err != nil {
				return nil, fmt.Errorf("%s: site %#x: %w", p.Def, site.Addr, err)
			}
			name := spec.ProgramName(i, j)
			cs.Programs[name] = &ebpf.ProgramSpec{Name: name, Type: typ, License: "GPL", Instructions: insns}
		}
	}
	return cs, nil
}

// baseCollection is the architecture of s and a collection with the
// "counts" array every kind of session has.
func baseCollection(s *spec.Spec) (*arch.Arch, *ebpf.CollectionSpec, error) {
	a, err := arch.ForName(s.Arch)
	if err != nil {
		return nil, nil, err
	}
	return a, &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"counts": {Name: "counts", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: uint32(len(s.Probes) + 1)},
		},
		Programs: map[string]*ebpf.ProgramSpec{},
	}, nil
}

// Registers the programs use: R6 the context (pt_regs), R7 the record, R8
// the ok bits, R9 the values captured at entry (return sites).
const (
	rCtx = asm.R6
	rRec = asm.R7
	rOK  = asm.R8
	rCap = asm.R9
)

// Stack slots of the site programs (offsets from R10). Below them, from
// -72 to unwind.SlotsEnd, the unwinder's; below that, from exprTop down,
// an expression's stack machine.
const (
	slotKey    = -8
	slotTmp    = -16
	slotCapKey = -32 // 16 bytes: goroutine or thread, probe
	slotPtr    = -40
	sCtx       = -48 // the context, while the stack is unwound
	sRec       = -56 // the record, while the stack is unwound
	sOK        = -64 // the ok bits, while the stack is unwound
)

// captureKey stores the key of values captured for probe i: the
// goroutine register's value, or the thread.
func captureKey(a *arch.Arch, reg string, i int) (asm.Instructions, error) {
	var in asm.Instructions
	if reg != "" {
		off, ok := a.PtRegs[reg]
		if !ok {
			return nil, fmt.Errorf("register %s is not in pt_regs", reg)
		}
		in = append(in, asm.LoadMem(asm.R1, rCtx, off, asm.DWord))
	} else {
		in = append(in, asm.FnGetCurrentPidTgid.Call(), asm.Mov.Reg(asm.R1, asm.R0))
	}
	return append(in,
		asm.StoreMem(asm.RFP, slotCapKey, asm.R1, asm.DWord),
		bpfasm.StoreImm64(asm.RFP, slotCapKey+8, int32(i)),
	), nil
}

// captured leaves in R9 the values captured at the entry of this call
// for probe i (0: none).
func captured(a *arch.Arch, key string, i int) (asm.Instructions, error) {
	k, err := captureKey(a, key, i)
	if err != nil {
		return nil, err
	}
	k = append(k, bpfasm.Lookup("captures", slotCapKey, "")...)
	return append(k, asm.Mov.Reg(rCap, asm.R0)), nil
}

// captureProgram saves each capture chain's value at a function's entry.
func captureProgram(a *arch.Arch, i, j int, site spec.Site, key string) (asm.Instructions, error) {
	in := asm.Instructions{asm.Mov.Reg(rCtx, asm.R1), asm.Mov.Imm(rOK, 0)}
	g, err := guarded(a, site.Guard, fmt.Sprintf("capture_guard_%d_%d", i, j))
	if err != nil {
		return nil, err
	}
	in = append(in, g...)
	k, err := captureKey(a, key, i)
	if err != nil {
		return nil, err
	}
	in = append(in, k...)
	done := fmt.Sprintf("capture_done_%d_%d", i, j)
	in = append(in, asm.StoreImm(asm.RFP, slotKey, 0, asm.Word))
	in = append(in, bpfasm.Lookup("scratch", slotKey, done)...)
	in = append(in, asm.Mov.Reg(rRec, asm.R0))
	for n, f := range site.Args {
		in = append(in, bpfasm.StoreImm64(rRec, int16(8*n), 0))
		code, err := fetchProgram(a, f, site.Addr, rRec, int16(8*n), fmt.Sprintf("cap_%d_%d_%d", i, j, n), 0, true)
		if err != nil {
			return nil, err
		}
		in = append(in, code...)
	}
	in = append(in,
		asm.LoadMapPtr(asm.R1, 0).WithReference("captures"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotCapKey),
		asm.Mov.Reg(asm.R3, rRec),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(done),
		asm.Return(),
	)
	return in, nil
}

// usesCaptures reports whether a site reads values captured at entry.
func usesCaptures(site spec.Site) bool {
	for _, f := range site.Args {
		for _, c := range f.Chains {
			if len(c.Reg) > 0 && c.Reg[0] == '@' {
				return true
			}
		}
	}
	return false
}

func siteProgram(a *arch.Arch, i, j, nprobes int, site spec.Site, key string, stacks StackMode, depth int, events, cookie bool) (asm.Instructions, error) {
	if site.Kind == spec.SiteCapture {
		return captureProgram(a, i, j, site, key)
	}
	if site.Kind == spec.SiteClear {
		return clearProgram(a, site.Mark)
	}
	label := func(s string) string { return fmt.Sprintf("%s_%d_%d", s, i, j) }
	fl, err := siteFilters(a, i, site, key, label)
	if err != nil {
		return nil, err
	}
	in := append(asm.Instructions{asm.Mov.Reg(rCtx, asm.R1)}, fl...)
	in = append(in, count(int32(i))...)
	if stacks == CountStacks {
		in = append(in, stackCount(a, i, label("stack_counted"), depth)...)
	}
	if len(site.Args) == 0 && stacks != EventStacks && !events {
		return append(in, asm.Mov.Imm(asm.R0, 0), asm.Return()), nil
	}
	size := spec.EventHeader + spec.ArgSlot*len(site.Args)
	if stacks == EventStacks {
		size += 8 * depth
	}
	in = append(in, reserveEvent(i, j, nprobes, size, cookie, label("reserved"))...)
	args, err := siteArgs(a, i, site, key, label)
	if err != nil {
		return nil, err
	}
	in = append(in, args...)
	if stacks == EventStacks {
		in = append(in, stackEvent(a, int16(spec.EventHeader+spec.ArgSlot*len(site.Args)), label("stacked"), depth)...)
	}
	in = append(in,
		asm.StoreMem(rRec, spec.EventOK, rOK, asm.DWord),
		asm.Mov.Reg(asm.R1, rRec),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnRingbufSubmit.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)
	return in, nil
}

// siteFilters are the guard, the mark and the filter of probe i's site,
// each of which may end the program before the site counts a hit (the
// context in rCtx).
func siteFilters(a *arch.Arch, i int, site spec.Site, key string, label func(string) string) (asm.Instructions, error) {
	in, err := guarded(a, site.Guard, label("guard"))
	if err != nil {
		return nil, err
	}
	mk, err := markInsns(a, site.Mark, label("mark"))
	if err != nil {
		return nil, err
	}
	in = append(in, mk...)
	fl, err := filterInsns(a, i, site, key, label("filter"))
	if err != nil {
		return nil, err
	}
	return append(in, fl...), nil
}

// reserveEvent reserves size bytes of the events ring for probe i's site
// j (a drop is counted under nprobes when the ring is full, and the
// program ends), keeps the record in rRec and writes its header: probe,
// site (the attach cookie with cookie), thread, time; rOK starts at 0.
func reserveEvent(i, j, nprobes, size int, cookie bool, reserved string) asm.Instructions {
	in := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("events"),
		asm.Mov.Imm(asm.R2, int32(size)),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JNE.Imm(asm.R0, 0, reserved),
	}
	in = append(in, count(int32(nprobes))...) // no room: count the drop
	in = append(in, asm.Mov.Imm(asm.R0, 0), asm.Return())
	in = append(in,
		asm.Mov.Reg(rRec, asm.R0).WithSymbol(reserved),
		asm.StoreImm(rRec, spec.EventProbe, int64(i), asm.Word),
	)
	if cookie {
		in = append(in,
			asm.Mov.Reg(asm.R1, rCtx),
			asm.FnGetAttachCookie.Call(),
			asm.StoreMem(rRec, spec.EventSite, asm.R0, asm.Word),
		)
	} else {
		in = append(in, asm.StoreImm(rRec, spec.EventSite, int64(j), asm.Word))
	}
	return append(in,
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(rRec, spec.EventPidTgid, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(rRec, spec.EventTime, asm.R0, asm.DWord),
		asm.Mov.Imm(rOK, 0),
	)
}

// siteArgs fetches the site's arguments into their slots of the record
// in rRec; a site that reads what its call's entry captured looks the
// capture up first and deletes it after.
func siteArgs(a *arch.Arch, i int, site spec.Site, key string, label func(string) string) (asm.Instructions, error) {
	var in asm.Instructions
	caps := usesCaptures(site)
	if caps {
		k, err := captured(a, key, i)
		if err != nil {
			return nil, err
		}
		in = append(in, k...)
	}
	if len(site.Args) > spec.MaxArgs {
		return nil, fmt.Errorf("%d arguments: at most %d", len(site.Args), spec.MaxArgs)
	}
	for k, f := range site.Args {
		off := int16(spec.EventHeader + spec.ArgSlot*k)
		if f.Part != nil && f.Part.Offset < 0 {
			continue // a struct's bytes fill a continuation slot
		}
		in = append(in, bpfasm.StoreImm64(rRec, off, 0))
		if f.Unavailable != "" {
			continue
		}
		code, err := fetchProgram(a, f, site.Addr, rRec, off, label(fmt.Sprintf("a%d", k)), k, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		in = append(in, code...)
	}
	if caps { // the call has returned: forget what its entry saved
		in = append(in,
			asm.LoadMapPtr(asm.R1, 0).WithReference("captures"),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, slotCapKey),
			asm.FnMapDeleteElem.Call(),
		)
	}
	return in, nil
}

// processTable leaves the current process's unwind table in R7 (the
// table of process 0, frame pointers only, for a process not added).
func processTable(out string) asm.Instructions {
	in := asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, pTgid, asm.R0, asm.Word),
	}
	return append(in, unwind.ProcTable(pTgid, false, out, nil)...)
}

// stackCount counts probe i's hit under the current user stack; R6 is the
// context and stays so.
func stackCount(a *arch.Arch, i int, done string, depth int) asm.Instructions {
	in := asm.Instructions{asm.StoreMem(asm.RFP, sCtx, rCtx, asm.DWord)}
	pass := unwind.Pass(done + "_u")
	in = append(in, processTable(pass)...)
	in = append(in, unwind.CtxRegs(a, rCtx)...)
	in = append(in, unwind.KeyBuffer(pass)...)
	in = append(in,
		asm.LoadMem(asm.R1, asm.RFP, pTgid, asm.Word),
		asm.StoreMem(asm.R6, 0, asm.R1, asm.Word),
		asm.StoreImm(asm.R6, 4, int64(i), asm.Word),
	)
	in = append(in, unwind.Unwind(done+"_u", 8, done, depth)...)
	in = append(in, unwind.CountStack(done)...)
	return append(in, asm.LoadMem(rCtx, asm.RFP, sCtx, asm.DWord).WithSymbol(done))
}

// stackEvent writes the user stack into the record (R7) at off; R6 (the
// context), R7 and R8 are kept.
func stackEvent(a *arch.Arch, off int16, done string, depth int) asm.Instructions {
	in := asm.Instructions{
		asm.StoreMem(asm.RFP, sCtx, rCtx, asm.DWord),
		asm.StoreMem(asm.RFP, sRec, rRec, asm.DWord),
		asm.StoreMem(asm.RFP, sOK, rOK, asm.DWord),
	}
	for k := 0; k < depth; k++ {
		in = append(in, bpfasm.StoreImm64(rRec, off+int16(8*k), 0))
	}
	in = append(in, processTable(unwind.Pass(done+"_u"))...)
	in = append(in, unwind.CtxRegs(a, rCtx)...)
	in = append(in, asm.LoadMem(asm.R6, asm.RFP, sRec, asm.DWord))
	in = append(in, unwind.Unwind(done+"_u", off, done, depth)...)
	return append(in,
		asm.LoadMem(rCtx, asm.RFP, sCtx, asm.DWord).WithSymbol(done),
		asm.LoadMem(rRec, asm.RFP, sRec, asm.DWord),
		asm.LoadMem(rOK, asm.RFP, sOK, asm.DWord),
	)
}

// count adds one to counts[key].
func count(key int32) asm.Instructions {
	skip := fmt.Sprintf("counted_%d", key) // one count per key in a program
	in := asm.Instructions{asm.StoreImm(asm.RFP, slotKey, int64(key), asm.Word)}
	in = append(in, bpfasm.Lookup("counts", slotKey, skip)...)
	return append(in,
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(skip),
	)
}

// value leaves in R1 the value of a chain's start and all its reads but
// the last, and returns the last read's offset (deref false: R1 is the
// value itself).
func chainStart(a *arch.Arch, c spec.Chain, at uint64, fail string) (asm.Instructions, int64, bool, error) {
	var in asm.Instructions
	if c.Const != nil {
		return asm.Instructions{asm.LoadImm(asm.R1, *c.Const, asm.DWord)}, 0, false, nil
	}
	if c.Builtin != "" {
		code, err := builtin(c.Builtin)
		return code, 0, false, err
	}
	if len(c.Expr) > 0 {
		code, err := exprInsns(a, c.Expr, at, fail)
		if err != nil {
			return nil, 0, false, err
		}
		in = code
	} else if len(c.Reg) > 1 && c.Reg[0] == '@' {
		var n int
		if _, err := fmt.Sscanf(c.Reg, "@%d", &n); err != nil || n < 0 || n >= spec.MaxArgs {
			return nil, 0, false, fmt.Errorf("bad captured value %s", c.Reg)
		}
		// No entry seen for this call (attached mid-call): unreadable.
		in = append(in, asm.JEq.Imm(rCap, 0, fail), asm.LoadMem(asm.R1, rCap, int16(8*n), asm.DWord))
	} else if c.Field != nil {
		size, ok := loadSizes[c.Field.Size]
		if !ok || c.Field.Text {
			return nil, 0, false, fmt.Errorf("record field of %d bytes is not a scalar", c.Field.Size)
		}
		in = append(in, asm.LoadMem(asm.R1, rCtx, c.Field.Offset, size))
	} else {
		off, ok := a.PtRegs[c.Reg]
		if !ok {
			return nil, 0, false, fmt.Errorf("register %s is not in pt_regs", c.Reg)
		}
		in = append(in, asm.LoadMem(asm.R1, rCtx, off, asm.DWord))
	}
	if len(c.Derefs) == 0 {
		return in, 0, false, nil
	}
	for _, d := range c.Derefs[:len(c.Derefs)-1] {
		in = append(in, readUser(d, 8, asm.RFP, slotTmp, fail)...)
		in = append(in, asm.LoadMem(asm.R1, asm.RFP, slotTmp, asm.DWord))
	}
	return in, c.Derefs[len(c.Derefs)-1], true, nil
}

// readUser reads n bytes at R1+d into dst+off with bpf_probe_read_user,
// jumping to fail when the read faults.
func readUser(d int64, n int32, dst asm.Register, off int16, fail string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, int32(d)),
		asm.Mov.Reg(asm.R1, dst),
		asm.Add.Imm(asm.R1, int32(off)),
		asm.Mov.Imm(asm.R2, n),
		asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, fail),
	}
}

// fetchProgram reads argument k into the record's slot at off and sets
// its ok bit; a fault jumps past the bit. at is the file address the
// program is attached at.
func fetchProgram(a *arch.Arch, f spec.Fetch, at uint64, rRec asm.Register, off int16, fail string, k int, noOK bool) (asm.Instructions, error) {
	var in asm.Instructions
	value := func(c spec.Chain, size int64, dst asm.Register, dstOff int16) error {
		code, last, deref, err := chainStart(a, c, at, fail)
		if err != nil {
			return err
		}
		in = append(in, code...)
		if !deref {
			in = append(in, asm.StoreMem(dst, dstOff, asm.R1, asm.DWord))
			return nil
		}
		if dst == asm.RFP {
			in = append(in, bpfasm.StoreImm64(dst, dstOff, 0))
		}
		in = append(in, readUser(last, int32(size), dst, dstOff, fail)...)
		return nil
	}
	switch f.Type {
	case "string":
		if err := value(f.Chains[0], 8, asm.RFP, slotTmp); err != nil {
			return nil, err
		}
		in = append(in, asm.LoadMem(asm.R1, asm.RFP, slotTmp, asm.DWord), asm.StoreMem(asm.RFP, slotPtr, asm.R1, asm.DWord))
		if err := value(f.Chains[1], 8, rRec, off); err != nil {
			return nil, err
		}
		in = append(in,
			asm.LoadMem(asm.R2, rRec, off, asm.DWord),
			asm.JLE.Imm(asm.R2, spec.StringMax, fail+"_len"),
			asm.Mov.Imm(asm.R2, spec.StringMax),
			asm.Mov.Reg(asm.R1, rRec).WithSymbol(fail+"_len"),
			asm.Add.Imm(asm.R1, int32(off)+8),
			asm.LoadMem(asm.R3, asm.RFP, slotPtr, asm.DWord),
			asm.FnProbeReadUser.Call(),
			asm.JNE.Imm(asm.R0, 0, fail),
		)
	case "iface": // the type word in the value, the data word after it
		if err := value(f.Chains[0], 8, rRec, off); err != nil {
			return nil, err
		}
		if err := value(f.Chains[1], 8, rRec, off+8); err != nil {
			return nil, err
		}
	case "cstring":
		if c := f.Chains[0]; c.Field != nil && c.Field.DataLoc {
			in = append(in, copyDataLoc(c.Field, rRec, off, fail)...)
			break
		}
		if c := f.Chains[0]; c.Field != nil && c.Field.Text {
			in = append(in, copyField(c.Field, rRec, off+8)...)
			in = append(in, bpfasm.StoreImm64(rRec, off, int32(c.Field.Size)))
			break
		}
		if err := value(f.Chains[0], 8, asm.RFP, slotTmp); err != nil {
			return nil, err
		}
		in = append(in,
			asm.LoadMem(asm.R3, asm.RFP, slotTmp, asm.DWord),
			asm.Mov.Reg(asm.R1, rRec),
			asm.Add.Imm(asm.R1, int32(off)+8),
			asm.Mov.Imm(asm.R2, spec.StringMax),
			asm.FnProbeReadUserStr.Call(),
			asm.StoreMem(rRec, off, asm.R0, asm.DWord),
			asm.JSLT.Imm(asm.R0, 0, fail),
		)
	case "chars", "bytes", "struct":
		if c := f.Chains[0]; c.Builtin == "comm" {
			in = append(in, comm(rRec, off, f.Size)...)
			break
		}
		code, last, deref, err := chainStart(a, f.Chains[0], at, fail)
		if err != nil {
			return nil, err
		}
		if !deref {
			return nil, fmt.Errorf("bytes need an address")
		}
		n := min(f.Size, spec.StringMax)
		if f.Type == "struct" { // its bytes go on into the slots of its parts
			n = min(f.Size, spec.StructSlots*spec.ArgSlot-8)
		}
		in = append(in, code...)
		in = append(in, readUser(last, int32(n), rRec, off+8, fail)...)
		in = append(in, bpfasm.StoreImm64(rRec, off, int32(n)))
	default:
		if err := value(f.Chains[0], f.Size, rRec, off); err != nil {
			return nil, err
		}
	}
	if !noOK {
		in = append(in, asm.Or.Imm(rOK, int32(1)<<k))
	}
	// The fault label: the next instruction (or the submit) carries it.
	in = append(in, asm.Mov.Reg(rOK, rOK).WithSymbol(fail))
	return in, nil
}

// builtins are the helper whose result holds each builtin and which
// part of it: the whole 64 bits, the low 32 or the high 32.
var builtins = map[string]struct {
	call asm.BuiltinFunc
	part string
}{
	"pid": {asm.FnGetCurrentPidTgid, "high"}, "tid": {asm.FnGetCurrentPidTgid, "low"},
	"uid": {asm.FnGetCurrentUidGid, "low"}, "gid": {asm.FnGetCurrentUidGid, "high"},
	"cpu": {asm.FnGetSmpProcessorId, "low"}, "ts": {asm.FnKtimeGetNs, "whole"},
}

// builtin leaves a builtin's value in R1 (see spec.Chain.Builtin).
func builtin(name string) (asm.Instructions, error) {
	b, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("unknown builtin %q", name)
	}
	in := asm.Instructions{b.call.Call()}
	switch b.part {
	case "high":
		return append(in, asm.Mov.Reg(asm.R1, asm.R0), asm.RSh.Imm(asm.R1, 32)), nil
	case "low":
		return append(in, asm.Mov.Reg32(asm.R1, asm.R0)), nil
	}
	return append(in, asm.Mov.Reg(asm.R1, asm.R0)), nil
}

// comm writes the thread's name into the slot at rec+off as a "chars"
// value: its n bytes after the slot's length word.
func comm(rec asm.Register, off int16, n int64) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R1, rec),
		asm.Add.Imm(asm.R1, int32(off)+8),
		asm.Mov.Imm(asm.R2, int32(n)),
		asm.FnGetCurrentComm.Call(),
		bpfasm.StoreImm64(rec, off, int32(n)),
	}
}

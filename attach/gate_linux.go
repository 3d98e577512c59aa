package attach

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/binscope/binscope/internal/elfx"
)

// StartGated starts cmd under a gate: the process stops after its exec
// (GateHooks.Exec), again each time the dynamic loader finished mapping
// libraries, before any of their code ran (GateHooks.Loaded), and last at
// its ELF entry point, after which it runs untraced. It works as a
// debugger's first breakpoints do (ptrace, an int3 at the loader's
// _dl_debug_state and one at the entry, each restored), on x86-64;
// elsewhere, or when tracing is refused, cmd just starts and both hooks
// are called at once. It returns the started command, to wait for: cmd,
// or a copy started without tracing when the kernel refused it. A command
// that ends before its entry point (the loader failed) comes back as an
// *EndedError.
func StartGated(cmd *exec.Cmd, h GateHooks) (*exec.Cmd, error) {
	if h.Exec == nil {
		h.Exec = func(int) {}
	}
	if h.Loaded == nil {
		h.Loaded = func(int) {}
	}
	ungated := func(c *exec.Cmd) (*exec.Cmd, error) {
		if err := c.Start(); err != nil {
			return nil, err
		}
		h.Exec(c.Process.Pid)
		h.Loaded(c.Process.Pid)
		return c, nil
	}
	if runtime.GOARCH != "amd64" {
		return ungated(cmd)
	}
	// Every ptrace request must come from the thread that started the
	// tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := *cmd.SysProcAttr
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) {
			return nil, err
		}
		// Tracing refused (Yama): start untraced; the tables come at the
		// first refresh.
		plain := exec.Command(cmd.Path, cmd.Args[1:]...)
		plain.Args, plain.Env, plain.Dir = cmd.Args, cmd.Env, cmd.Dir
		plain.Stdin, plain.Stdout, plain.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
		plain.SysProcAttr = &attr
		return ungated(plain)
	}
	pid := cmd.Process.Pid
	g := &gate{pid: pid, h: h}
	if err := g.run(); err != nil {
		var ended *EndedError
		if errors.As(err, &ended) {
			return nil, err // reaped here: there is nothing to wait for
		}
		// The process goes on untouched; only the tables may come late.
		g.restoreAll()
		syscall.PtraceDetach(pid)
		if !g.execSeen {
			h.Exec(pid)
		}
		h.Loaded(pid)
		return cmd, nil
	}
	return cmd, syscall.PtraceDetach(pid)
}

// rtConsistent is r_debug.r_state's RT_CONSISTENT: the link map is
// complete (RT_ADD and RT_DELETE say it is changing).
const rtConsistent = 0

// rStateOffset is r_state's offset in struct r_debug on LP64: int
// r_version, struct link_map *r_map, ElfW(Addr) r_brk, then r_state.
const rStateOffset = 24

// gate is one command's trip from its exec to its entry point.
type gate struct {
	pid      int
	h        GateHooks
	execSeen bool
	// Breakpoints: address -> the byte the int3 replaced.
	bps        map[uint64]byte
	entry, dbg uint64 // the entry point; the loader's _dl_debug_state (0: none)
	rDebug     uint64 // the loader's _r_debug (0: unknown)
}

func (g *gate) wait() (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(g.pid, &ws, syscall.WALL, nil); err != nil {
		return ws, err
	}
	if ws.Exited() {
		return ws, &EndedError{Status: ws.ExitStatus()}
	}
	if ws.Signaled() {
		return ws, &EndedError{Status: 128 + int(ws.Signal())}
	}
	return ws, nil
}

func (g *gate) run() error {
	ws, err := g.wait()
	if err != nil {
		return err
	}
	if !ws.Stopped() {
		return errors.New("the command did not stop after exec")
	}
	g.execSeen = true
	g.h.Exec(g.pid)
	aux, err := readAuxv(g.pid)
	if err != nil {
		return err
	}
	g.entry = aux[atEntry]
	if g.entry == 0 {
		return errors.New("no AT_ENTRY in the process's auxiliary vector")
	}
	g.bps = map[uint64]byte{}
	if base := aux[atBase]; base != 0 {
		// Without the loader's hook the tables come at the entry point.
		g.dbg, g.rDebug, _ = loaderHook(g.pid, base)
	}
	for _, a := range []uint64{g.entry, g.dbg} {
		if a == 0 {
			continue
		}
		if err := g.insert(a); err != nil {
			return err
		}
	}
	sig := 0
	for {
		if err := syscall.PtraceCont(g.pid, sig); err != nil {
			return err
		}
		sig = 0
		ws, err := g.wait()
		if err != nil {
			return err
		}
		if !ws.Stopped() {
			continue
		}
		if ws.StopSignal() != syscall.SIGTRAP {
			// Another signal before the entry (rare): deliver it.
			sig = int(ws.StopSignal())
			continue
		}
		var regs syscall.PtraceRegs
		if err := syscall.PtraceGetRegs(g.pid, &regs); err != nil {
			return err
		}
		at := pc(&regs) - 1
		switch {
		case at == g.entry:
			g.restoreAll()
			setPC(&regs, at)
			if err := syscall.PtraceSetRegs(g.pid, &regs); err != nil {
				return err
			}
			g.h.Loaded(g.pid)
			return nil
		case at == g.dbg && g.dbg != 0:
			if g.consistent() {
				g.h.Loaded(g.pid)
			}
			if err := g.stepOver(at, &regs); err != nil {
				return err
			}
		default:
			// A SIGTRAP the program raised itself.
			sig = int(syscall.SIGTRAP)
		}
	}
}

// consistent reports whether the loader's link map is complete: the
// _dl_debug_state call after mapping, not the one before.
func (g *gate) consistent() bool {
	if g.rDebug == 0 {
		return true
	}
	b := make([]byte, 4)
	if _, err := syscall.PtracePeekData(g.pid, uintptr(g.rDebug+rStateOffset), b); err != nil {
		return true
	}
	return binary.LittleEndian.Uint32(b) == rtConsistent
}

// insert puts an int3 at a.
func (g *gate) insert(a uint64) error {
	b := make([]byte, 1)
	if _, err := syscall.PtracePeekData(g.pid, uintptr(a), b); err != nil {
		return err
	}
	if _, err := syscall.PtracePokeData(g.pid, uintptr(a), []byte{0xcc}); err != nil {
		return err
	}
	g.bps[a] = b[0]
	return nil
}

func (g *gate) restoreAll() {
	for a, b := range g.bps {
		syscall.PtracePokeData(g.pid, uintptr(a), []byte{b})
	}
	clear(g.bps)
}

// stepOver runs the instruction under the breakpoint at a, the process
// stopped just past it, and puts the breakpoint back.
func (g *gate) stepOver(a uint64, regs *syscall.PtraceRegs) error {
	if _, err := syscall.PtracePokeData(g.pid, uintptr(a), []byte{g.bps[a]}); err != nil {
		return err
	}
	setPC(regs, a)
	if err := syscall.PtraceSetRegs(g.pid, regs); err != nil {
		return err
	}
	if err := syscall.PtraceSingleStep(g.pid); err != nil {
		return err
	}
	for {
		ws, err := g.wait()
		if err != nil {
			return err
		}
		if ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP {
			break
		}
		// A signal arrived instead of the step: deliver it with the step.
		if err := syscall.PtraceSingleStep(g.pid); err != nil {
			return err
		}
	}
	_, err := syscall.PtracePokeData(g.pid, uintptr(a), []byte{0xcc})
	return err
}

// Auxiliary vector keys.
const (
	atBase  = 7 // the interpreter's load address
	atEntry = 9 // the program's entry point, in the process
)

// readAuxv reads process pid's auxiliary vector (LP64).
func readAuxv(pid int) (map[uint64]uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return nil, err
	}
	out := map[uint64]uint64{}
	for i := 0; i+16 <= len(b); i += 16 {
		k, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if k == 0 {
			break
		}
		out[k] = v
	}
	return out, nil
}

// loaderHook finds, in process pid whose interpreter is loaded at base,
// the loader's _dl_debug_state (which it calls before and after changing
// the link map) and its _r_debug, from the interpreter's dynamic symbols.
func loaderHook(pid int, base uint64) (dbg, rDebug uint64, err error) {
	path, err := mappedAt(pid, base)
	if err != nil {
		return 0, 0, err
	}
	ef, err := elfx.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer ef.Close()
	// The load bias: base is where the first PT_LOAD, page-aligned, went.
	bias := base
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			bias = base - (p.Vaddr &^ (p.Align - 1))
			break
		}
	}
	syms, err := ef.DynamicSymbols()
	if err != nil {
		return 0, 0, err
	}
	for _, s := range syms {
		name, _, _ := strings.Cut(s.Name, "@")
		switch name {
		case "_dl_debug_state":
			dbg = bias + s.Value
		case "_r_debug":
			rDebug = bias + s.Value
		}
	}
	if dbg == 0 {
		return 0, 0, fmt.Errorf("%s: no _dl_debug_state", path)
	}
	return dbg, rDebug, nil
}

// mappedAt is the path of the file mapped at addr in process pid.
func mappedAt(pid int, addr uint64) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 {
			continue
		}
		lo, _, _ := strings.Cut(fs[0], "-")
		if a, err := strconv.ParseUint(lo, 16, 64); err == nil && a == addr && strings.HasPrefix(fs[5], "/") {
			return strings.Join(fs[5:], " "), nil
		}
	}
	return "", fmt.Errorf("nothing mapped at %#x in process %d", addr, pid)
}

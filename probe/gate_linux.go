package probe

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/stack"
)

// StartAtEntry starts cmd and stops it once at its entry point, after the
// dynamic loader mapped its libraries and before any of its own code ran,
// to call atEntry with its process id: the moment to read its mappings
// for the stack unwinder. It works as a debugger's first breakpoint does
// (ptrace, an int3 at the ELF entry, restored before the process goes on),
// on x86-64; elsewhere, or when tracing is refused, cmd just starts and
// atEntry is called at once. It returns the started command, to wait for:
// cmd, or a copy started without tracing when the kernel refused it.
func StartAtEntry(cmd *exec.Cmd, atEntry func(pid int)) (*exec.Cmd, error) {
	if runtime.GOARCH != "amd64" {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		atEntry(cmd.Process.Pid)
		return cmd, nil
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
		if err := plain.Start(); err != nil {
			return nil, err
		}
		atEntry(plain.Process.Pid)
		return plain, nil
	}
	pid := cmd.Process.Pid
	if err := stopAtEntry(pid, cmd.Path); err != nil {
		var ended *EndedError
		if errors.As(err, &ended) {
			return nil, err // reaped here: there is nothing to wait for
		}
		// The process goes on untouched; only the tables may come late.
		syscall.PtraceDetach(pid)
		atEntry(pid)
		return cmd, nil
	}
	atEntry(pid)
	return cmd, syscall.PtraceDetach(pid)
}

// EndedError is StartAtEntry's error for a command that ended before its
// entry point (the dynamic loader failed): Status is its exit status, 128
// plus the signal for a signal.
type EndedError struct{ Status int }

func (e *EndedError) Error() string {
	return fmt.Sprintf("the command ended before its entry point, with status %d", e.Status)
}

// stopAtEntry runs the tracee, stopped after its exec, up to its entry
// point.
func stopAtEntry(pid int, path string) error {
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return err
	}
	if !ws.Stopped() {
		return errors.New("the command did not stop after exec")
	}
	entry, err := entryAddress(pid, path)
	if err != nil {
		return err
	}
	orig := make([]byte, 8)
	if _, err := syscall.PtracePeekData(pid, uintptr(entry), orig); err != nil {
		return err
	}
	trap := append([]byte{0xcc}, orig[1:]...)
	if _, err := syscall.PtracePokeData(pid, uintptr(entry), trap); err != nil {
		return err
	}
	restore := func() { syscall.PtracePokeData(pid, uintptr(entry), orig) }
	if err := syscall.PtraceCont(pid, 0); err != nil {
		restore()
		return err
	}
	for {
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
			return err
		}
		if ws.Exited() {
			return &EndedError{Status: ws.ExitStatus()}
		}
		if ws.Signaled() {
			return &EndedError{Status: 128 + int(ws.Signal())}
		}
		if ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP {
			break
		}
		// Another signal before the entry (rare): deliver it and go on.
		if err := syscall.PtraceCont(pid, int(ws.StopSignal())); err != nil {
			restore()
			return err
		}
	}
	restore()
	var regs syscall.PtraceRegs
	if err := syscall.PtraceGetRegs(pid, &regs); err != nil {
		return err
	}
	if regs.Rip != entry+1 {
		return fmt.Errorf("stopped at %#x, not at the entry %#x", regs.Rip, entry)
	}
	regs.Rip = entry
	return syscall.PtraceSetRegs(pid, &regs)
}

// entryAddress is the ELF entry point of path in process pid.
func entryAddress(pid int, path string) (uint64, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return 0, err
	}
	defer ef.Close()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, err
	}
	ms, err := stack.ProcMappings(pid)
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		if p, err := filepath.EvalSymlinks(m.Path); err == nil && p == real {
			return ef.Entry + m.Bias, nil
		}
	}
	return 0, fmt.Errorf("%s is not mapped in process %d", path, pid)
}

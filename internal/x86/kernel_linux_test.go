package x86

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/binscope/binscope/internal/testutil"
)

// slot is the room each crafted instruction has in the file the kernel
// reads: the instruction, then NOPs.
const slot = 32

// kernelVerdicts asks the running kernel, for each instruction, whether it
// accepts a uprobe on it: the instructions are written to a file, the
// file is mapped executable into this process, and a uprobe is attached at
// each one's offset for this process alone (a uprobe_multi link with a
// PID), which makes the kernel analyse the instruction at once. nil is
// accepted; otherwise what the kernel said (ENOTSUPP for an instruction
// it refuses, ENOEXEC for one it cannot decode). Each link is attached and
// closed on its own, many at a time: closing waits for a grace period,
// which concurrent closes share.
func kernelVerdicts(t *testing.T, insns [][]byte) []error {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "attaching uprobes needs root")
	}
	buf := make([]byte, (len(insns)+1)*slot)
	for i := range buf {
		buf[i] = 0x90
	}
	for i, in := range insns {
		if len(in) > slot-1 {
			t.Fatalf("% x: longer than a slot", in)
		}
		copy(buf[(i+1)*slot:], in) // offset 0 would mean "no address" to link
	}
	path := filepath.Join(t.TempDir(), "insns.bin")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	m, err := unix.Mmap(fd, 0, len(buf), unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceUprobeMulti, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		testutil.Skipf(t, "cannot load a uprobe_multi program: %v", err)
	}
	defer prog.Close()
	ex, err := link.OpenExecutable(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]error, len(insns))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				l, err := ex.UprobeMulti(nil, prog, &link.UprobeMultiOptions{Addresses: []uint64{uint64((i + 1) * slot)}, PID: uint32(os.Getpid())})
				if err == nil {
					l.Close()
				}
				out[i] = err
			}
		}()
	}
	for i := range insns {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range out {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, ebpf.ErrNotSupported) {
			testutil.Skipf(t, "the kernel refused a uprobe_multi link: %v", err)
		}
	}
	runtime.KeepAlive(m)
	return out
}

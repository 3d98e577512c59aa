// Package arch holds the per-architecture tables the views need: DWARF
// register numbers and their names, which registers a uprobe can read, the
// canonical frame address at a function's entry, and Go's register ABI. The
// architecture comes from the binary (elf.File.Machine), never from the host.
package arch

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
)

// ErrUnsupportedArch is returned for machines without tables.
var ErrUnsupportedArch = errors.New("unsupported architecture")

// Arch describes one machine.
type Arch struct {
	Name string
	// regs maps DWARF register numbers to names; vector registers (XMM on
	// amd64, V on arm64) are marked: pt_regs, and so a uprobe, cannot read
	// them.
	regs  map[int]Reg
	SP    string // stack pointer name
	SPReg int    // its DWARF number
	// EntryCFA is the distance from the stack pointer to the canonical
	// frame address at a function's first instruction: 8 on amd64 (the
	// return address is on the stack), 0 on arm64 (it is in LR).
	EntryCFA int64
	// GoIntRegs and GoFloatRegs are Go's ABIInternal argument registers, in
	// assignment order (cmd/compile/abi-internal.md).
	GoIntRegs   []string
	GoFloatRegs []string
	// PtRegs is the offset of each general register in the struct
	// pt_regs a uprobe program receives (the kernel's user ABI).
	PtRegs map[string]int16
	// GoG is the register that holds the current goroutine (R14 on amd64,
	// R28 on arm64), which keys per-goroutine state.
	GoG string
}

// Reg is one register.
type Reg struct {
	Name   string
	Vector bool // a SIMD/FP register: not in pt_regs, not readable by a uprobe
}

// RegName returns the name of DWARF register n, or "r<n>".
func (a *Arch) RegName(n int) Reg {
	if r, ok := a.regs[n]; ok {
		return r
	}
	return Reg{Name: fmt.Sprintf("r%d", n)}
}

// RegNumber returns the DWARF number of the register called name.
func (a *Arch) RegNumber(name string) (int, bool) {
	for n, r := range a.regs {
		if r.Name == name {
			return n, true
		}
	}
	return 0, false
}

// ForMachine returns the tables of m.
func ForMachine(m elf.Machine) (*Arch, error) {
	switch m {
	case elf.EM_X86_64:
		return amd64, nil
	case elf.EM_AARCH64:
		return arm64, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedArch, m)
}

var amd64 = func() *Arch {
	// System V psABI DWARF numbering.
	names := []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP",
		"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RIP"}
	a := &Arch{Name: "x86_64", regs: map[int]Reg{}, SP: "RSP", SPReg: 7, EntryCFA: 8,
		GoIntRegs:   []string{"RAX", "RBX", "RCX", "RDI", "RSI", "R8", "R9", "R10", "R11"},
		GoFloatRegs: []string{"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14"},
		PtRegs:      map[string]int16{},
		GoG:         "R14",
	}
	// arch/x86/include/uapi/asm/ptrace.h, 8 bytes each in this order.
	for i, n := range []string{"R15", "R14", "R13", "R12", "RBP", "RBX", "R11", "R10", "R9", "R8",
		"RAX", "RCX", "RDX", "RSI", "RDI", "ORIG_RAX", "RIP", "CS", "EFLAGS", "RSP", "SS"} {
		a.PtRegs[n] = int16(8 * i)
	}
	for i, n := range names {
		a.regs[i] = Reg{Name: n}
	}
	for i := 0; i < 16; i++ {
		a.regs[17+i] = Reg{Name: fmt.Sprintf("X%d", i), Vector: true}
	}
	return a
}()

var arm64 = func() *Arch {
	a := &Arch{Name: "aarch64", regs: map[int]Reg{}, SP: "SP", SPReg: 31, EntryCFA: 0, PtRegs: map[string]int16{}, GoG: "X28"}
	// struct user_pt_regs: x0..x30, sp, pc, pstate.
	for i := 0; i <= 30; i++ {
		a.PtRegs[fmt.Sprintf("X%d", i)] = int16(8 * i)
	}
	a.PtRegs["SP"], a.PtRegs["PC"] = 8*31, 8*32
	for i := 0; i <= 30; i++ {
		a.regs[i] = Reg{Name: fmt.Sprintf("X%d", i)}
	}
	a.regs[31] = Reg{Name: "SP"}
	for i := 0; i < 32; i++ {
		a.regs[64+i] = Reg{Name: fmt.Sprintf("V%d", i), Vector: true}
	}
	for i := 0; i <= 15; i++ {
		a.GoIntRegs = append(a.GoIntRegs, fmt.Sprintf("X%d", i))
		a.GoFloatRegs = append(a.GoFloatRegs, fmt.Sprintf("V%d", i))
	}
	return a
}()

// HostName names the architecture this program runs on as ELF tools and
// the models do (x86_64, aarch64): the running kernel's, whose BTF and
// tracepoints do not say it.
func HostName() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// Package arch holds the per-architecture tables the rest of the tree reads
// its machine facts from: DWARF register numbers and their names, the
// struct pt_regs a uprobe program receives (each register's offset and
// the kernel's name for it), the stack, frame and instruction pointers,
// the C and Go register ABIs, the canonical frame address at a function's
// entry, and the flags a Go stack check branches on. The architecture
// comes from the binary (elf.File.Machine) or a spec (ByName); only a
// profile of this machine asks for the host's (Host).
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
	// PC and FP name the instruction pointer and the frame pointer (RIP
	// and RBP on amd64, PC and X29 on arm64), as PtRegs does.
	PC, FP string
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
	// PtRegsC names each register of PtRegs as the kernel's C struct
	// does (ax, bp, flags on amd64: also bpftrace's reg() and perf
	// probe's %REG names there); PtRegsSize is the struct's size in bytes.
	PtRegsC    map[string]string
	PtRegsSize int
	// GoG is the register that holds the current goroutine (R14 on amd64,
	// R28 on arm64), which keys per-goroutine state.
	GoG string
	// CIntRegs are the C calling convention's integer argument registers
	// in order (System V: RDI, RSI, RDX, RCX, R8, R9; AAPCS64: X0-X7);
	// Ret holds a C function's integer or pointer result (RAX, X0) and
	// FloatRet its floating-point one (X0, which is XMM0, on amd64; V0).
	CIntRegs      []string
	Ret, FloatRet string
	// Flags is the flags register in pt_regs (EFLAGS), and BelowEq the
	// bits of it an unsigned below-or-equal branch tests: x86's JBE jumps
	// when the carry flag (bit 0) or the zero flag (bit 6) is set. Zero
	// where that condition is no mask of one register (arm64's b.ls).
	Flags   string
	BelowEq uint64
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

// ByName returns the tables of the machine a spec names (Name: "x86_64",
// "aarch64").
func ByName(name string) (*Arch, error) {
	for _, a := range []*Arch{amd64, arm64} {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedArch, name)
}

// Host returns the running machine's tables: what a profile of this
// machine's processes, or its kernel's pt_regs, needs.
func Host() (*Arch, error) {
	switch runtime.GOARCH {
	case "amd64":
		return amd64, nil
	case "arm64":
		return arm64, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedArch, runtime.GOARCH)
}

var amd64 = func() *Arch {
	// System V psABI DWARF numbering.
	names := []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP",
		"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RIP"}
	a := &Arch{Name: "x86_64", regs: map[int]Reg{}, SP: "RSP", SPReg: 7, PC: "RIP", FP: "RBP", EntryCFA: 8,
		GoIntRegs:   []string{"RAX", "RBX", "RCX", "RDI", "RSI", "R8", "R9", "R10", "R11"},
		GoFloatRegs: []string{"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14"},
		PtRegs:      map[string]int16{},
		PtRegsC:     map[string]string{},
		GoG:         "R14",
		CIntRegs:    []string{"RDI", "RSI", "RDX", "RCX", "R8", "R9"},
		Ret:         "RAX",
		FloatRet:    "X0",
		Flags:       "EFLAGS",
		BelowEq:     1<<0 | 1<<6,
	}
	// arch/x86/include/uapi/asm/ptrace.h, 8 bytes each in this order.
	for i, n := range [][2]string{{"R15", "r15"}, {"R14", "r14"}, {"R13", "r13"}, {"R12", "r12"}, {"RBP", "bp"},
		{"RBX", "bx"}, {"R11", "r11"}, {"R10", "r10"}, {"R9", "r9"}, {"R8", "r8"}, {"RAX", "ax"}, {"RCX", "cx"},
		{"RDX", "dx"}, {"RSI", "si"}, {"RDI", "di"}, {"ORIG_RAX", "orig_ax"}, {"RIP", "ip"}, {"CS", "cs"},
		{"EFLAGS", "flags"}, {"RSP", "sp"}, {"SS", "ss"}} {
		a.PtRegs[n[0]], a.PtRegsC[n[0]] = int16(8*i), n[1]
		a.PtRegsSize = 8 * (i + 1)
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
	a := &Arch{Name: "aarch64", regs: map[int]Reg{}, SP: "SP", SPReg: 31, PC: "PC", FP: "X29", EntryCFA: 0,
		PtRegs: map[string]int16{}, PtRegsC: map[string]string{}, PtRegsSize: 8 * 34, GoG: "X28",
		Ret: "X0", FloatRet: "V0"}
	// struct user_pt_regs: x0..x30, sp, pc, pstate.
	for i := 0; i <= 30; i++ {
		a.PtRegs[fmt.Sprintf("X%d", i)] = int16(8 * i)
		a.PtRegsC[fmt.Sprintf("X%d", i)] = fmt.Sprintf("regs[%d]", i)
	}
	a.PtRegs["SP"], a.PtRegs["PC"], a.PtRegs["PSTATE"] = 8*31, 8*32, 8*33
	a.PtRegsC["SP"], a.PtRegsC["PC"], a.PtRegsC["PSTATE"] = "sp", "pc", "pstate"
	for i := 0; i <= 7; i++ {
		a.CIntRegs = append(a.CIntRegs, fmt.Sprintf("X%d", i))
	}
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

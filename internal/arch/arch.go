// Package arch holds the per-architecture tables the rest of the tree reads
// its machine facts from: DWARF register numbers and their names, the
// layout of the struct pt_regs a uprobe program receives (which registers
// it can read, at which offsets, under which member names in C, bpftrace
// and perf probe), the stack, frame and instruction pointers, the C and Go
// register ABIs, the canonical frame address at a function's entry, and
// the flags a Go stack check branches on. The architecture comes from the
// binary (elf.File.Machine) or from a spec that names it; only what runs
// on this machine (a CPU profile, the kernel's BTF) asks for the host's
// (HostName).
package arch

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
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
	// ptRegsMembers are the names the kernel's headers give pt_regs'
	// members, by register (none yet for arm64).
	ptRegsMembers map[string]string
	// GoG is the register that holds the current goroutine (R14 on amd64,
	// R28 on arm64), which keys per-goroutine state.
	GoG string
	// CIntRegs are the C calling convention's integer argument registers
	// in order (System V: RDI, RSI, RDX, RCX, R8, R9; AAPCS64: X0-X7);
	// Ret holds a C function's integer or pointer result (RAX, X0) and
	// FloatRet its floating-point one (X0, which is XMM0, on amd64; V0).
	CIntRegs      []string
	Ret, FloatRet string
	// CallerSaved are the general registers a C call may change (System
	// V: RAX, RCX, RDX, RSI, RDI, R8-R11; AAPCS64: X0-X18). Go's internal
	// ABI saves none but the stack and frame pointers and GoG.
	CallerSaved []string
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

// PtRegsMember returns the name the kernel's headers give register reg's
// member of struct pt_regs ("ax" for RAX, "flags" for EFLAGS, "r8" for
// R8), which BPF programs in C, bpftrace's reg() and perf probe's %REG
// use, or "" when pt_regs has no such member.
func (a *Arch) PtRegsMember(reg string) string { return a.ptRegsMembers[reg] }

// PtReg is one member of struct pt_regs.
type PtReg struct {
	Reg    string // the register, as RegName spells it
	Member string // the member's name in the kernel's headers
	Offset int16
}

// PtRegsLayout returns the members of struct pt_regs in memory order; each
// is 8 bytes.
func (a *Arch) PtRegsLayout() []PtReg {
	var out []PtReg
	for reg, off := range a.PtRegs {
		out = append(out, PtReg{Reg: reg, Member: a.ptRegsMembers[reg], Offset: off})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out
}

// ForName returns the tables of the machine called name, as Arch.Name
// spells it (x86_64, aarch64).
func ForName(name string) (*Arch, error) {
	for _, a := range []*Arch{amd64(), arm64()} {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedArch, name)
}

// ForMachine returns the tables of m.
func ForMachine(m elf.Machine) (*Arch, error) {
	switch m {
	case elf.EM_X86_64:
		return amd64(), nil
	case elf.EM_AARCH64:
		return arm64(), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedArch, m)
}

// The tables are built on first use, not when a program starts.
var amd64 = sync.OnceValue(func() *Arch {
	// System V psABI DWARF numbering.
	names := []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP",
		"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RIP"}
	a := &Arch{Name: "x86_64", regs: map[int]Reg{}, SP: "RSP", SPReg: 7, EntryCFA: 8,
		GoIntRegs:   []string{"RAX", "RBX", "RCX", "RDI", "RSI", "R8", "R9", "R10", "R11"},
		GoFloatRegs: []string{"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14"},
		PtRegs:      map[string]int16{},
		GoG:         "R14",
		PC:          "RIP",
		FP:          "RBP",
		CIntRegs:    []string{"RDI", "RSI", "RDX", "RCX", "R8", "R9"},
		CallerSaved: []string{"RAX", "RCX", "RDX", "RSI", "RDI", "R8", "R9", "R10", "R11"},
		Ret:         "RAX",
		FloatRet:    "X0",
		Flags:       "EFLAGS",
		BelowEq:     1<<0 | 1<<6,
	}
	// arch/x86/include/asm/ptrace.h (uapi's, with other member names),
	// 8 bytes each in this order.
	a.ptRegsMembers = map[string]string{}
	for i, r := range [][2]string{{"R15", "r15"}, {"R14", "r14"}, {"R13", "r13"}, {"R12", "r12"}, {"RBP", "bp"},
		{"RBX", "bx"}, {"R11", "r11"}, {"R10", "r10"}, {"R9", "r9"}, {"R8", "r8"}, {"RAX", "ax"}, {"RCX", "cx"},
		{"RDX", "dx"}, {"RSI", "si"}, {"RDI", "di"}, {"ORIG_RAX", "orig_ax"}, {"RIP", "ip"}, {"CS", "cs"},
		{"EFLAGS", "flags"}, {"RSP", "sp"}, {"SS", "ss"}} {
		a.PtRegs[r[0]] = int16(8 * i)
		a.ptRegsMembers[r[0]] = r[1]
	}
	for i, n := range names {
		a.regs[i] = Reg{Name: n}
	}
	for i := 0; i < 16; i++ {
		a.regs[17+i] = Reg{Name: fmt.Sprintf("X%d", i), Vector: true}
	}
	return a
})

var arm64 = sync.OnceValue(func() *Arch {
	// struct user_pt_regs: x0..x30, sp, pc, pstate. The generators of C,
	// bpftrace and perf probe text do not know arm64 yet: no member names.
	a := &Arch{Name: "aarch64", regs: map[int]Reg{}, SP: "SP", SPReg: 31, PC: "PC", FP: "X29", EntryCFA: 0,
		PtRegs: map[string]int16{}, GoG: "X28", Ret: "X0", FloatRet: "V0"}
	for i := 0; i <= 18; i++ {
		if i <= 7 {
			a.CIntRegs = append(a.CIntRegs, fmt.Sprintf("X%d", i))
		}
		a.CallerSaved = append(a.CallerSaved, fmt.Sprintf("X%d", i))
	}
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
})

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

// GoMinor is the minor version of a Go release as build information and
// GOTOOLCHAIN spell it: 16 for go1.16.15, 21 for go1.21rc2; 0 for what is
// not a Go 1 release (a devel version, "").
func GoMinor(goVersion string) int {
	rest, ok := strings.CutPrefix(goVersion, "go1.")
	if !ok {
		return 0
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// GoRegABI reports whether Go code built by goVersion passes arguments
// and results in registers (ABIInternal, cmd/compile/abi-internal.md):
// from Go 1.17 on x86-64 and Go 1.18 on arm64. Before that, Go functions
// take every argument and result on the stack (ABI0: see
// types.GoStackOffsets). A version that is not a release is taken for a
// recent one.
func (a *Arch) GoRegABI(goVersion string) bool {
	m := GoMinor(goVersion)
	switch {
	case m == 0:
		return true
	case a.Name == "x86_64":
		return m >= 17
	case a.Name == "aarch64":
		return m >= 18
	}
	return true
}

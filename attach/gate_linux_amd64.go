package attach

import "syscall"

// pc and setPC are the stopped thread's instruction pointer.
func pc(r *syscall.PtraceRegs) uint64        { return r.Rip }
func setPC(r *syscall.PtraceRegs, at uint64) { r.Rip = at }

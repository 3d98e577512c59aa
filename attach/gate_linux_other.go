//go:build linux && !amd64

package attach

import "syscall"

// The gate stops commands on amd64 only (StartGated starts them ungated
// elsewhere): its breakpoint is x86's int3.
func pc(*syscall.PtraceRegs) uint64     { return 0 }
func setPC(*syscall.PtraceRegs, uint64) {}

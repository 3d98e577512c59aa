package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// DispatchName names the program that runs, for probe i, the program of
// the site a hit came from (Dispatch), and its program array.
func DispatchName(i int) string { return fmt.Sprintf("p%d_sites", i) }

// Dispatch adds to cs, named for probe i, a program to attach at many
// sites through one link (all of a probe's, or of the probes one
// wildcard names): at a hit it reads the attach cookie, whose upper 32
// bits are an index k into progs, and tail-calls progs[k], the program
// of that site, through a program array of the same name. The site
// programs run unchanged: the cookie's lower 32 bits are the site's index
// in its probe, which they read. So sites whose arguments live in
// different places (one inline expansion in a register, another a
// constant), or of different functions, still share one link. The
// programs must have the attach type of the dispatcher (the kernel
// refuses a tail call between programs of different types).
func Dispatch(cs *ebpf.CollectionSpec, i int, progs []string, typ ebpf.AttachType) {
	name := DispatchName(i)
	arr := &ebpf.MapSpec{Name: name, Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: uint32(len(progs))}
	for k, prog := range progs {
		arr.Contents = append(arr.Contents, ebpf.MapKV{Key: uint32(k), Value: prog})
	}
	cs.Maps[name] = arr
	cs.Programs[name] = &ebpf.ProgramSpec{Name: name, Type: ebpf.Kprobe, AttachType: typ, License: "GPL", Instructions: asm.Instructions{
		asm.Mov.Reg(rCtx, asm.R1),
		asm.FnGetAttachCookie.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.RSh.Imm(asm.R3, 32),
		asm.Mov.Reg(asm.R1, rCtx),
		asm.LoadMapPtr(asm.R2, 0).WithReference(name),
		asm.FnTailCall.Call(),
		// Not reached: every site has its program.
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}}
}

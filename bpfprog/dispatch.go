package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// DispatchName names the program that runs, for probe i, the program of
// the site a hit came from (Dispatch), and its program array.
func DispatchName(i int) string { return fmt.Sprintf("p%d_sites", i) }

// Dispatch adds to cs, for probe i, a program to attach at all of the
// probe's sites through one link: at a hit it reads the site index from
// the attach cookie and tail-calls the program that site runs (sites[j]
// names site j's program), through a program array of the same name.
// The site programs run unchanged, the cookie theirs to read too, so that
// sites whose arguments live in different places (one inline expansion
// in a register, another a constant) still share one link. The programs
// must have the attach type of the dispatcher (the kernel refuses a tail
// call between programs of different types).
func Dispatch(cs *ebpf.CollectionSpec, i int, sites map[int]string, typ ebpf.AttachType) {
	name := DispatchName(i)
	n := 0
	arr := &ebpf.MapSpec{Name: name, Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4}
	for j, prog := range sites {
		arr.Contents = append(arr.Contents, ebpf.MapKV{Key: uint32(j), Value: prog})
		n = max(n, j+1)
	}
	arr.MaxEntries = uint32(n)
	cs.Maps[name] = arr
	cs.Programs[name] = &ebpf.ProgramSpec{Name: name, Type: ebpf.Kprobe, AttachType: typ, License: "GPL", Instructions: asm.Instructions{
		asm.Mov.Reg(rCtx, asm.R1),
		asm.FnGetAttachCookie.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Mov.Reg(asm.R1, rCtx),
		asm.LoadMapPtr(asm.R2, 0).WithReference(name),
		asm.FnTailCall.Call(),
		// Not reached: every site of the probe has its program.
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}}
}

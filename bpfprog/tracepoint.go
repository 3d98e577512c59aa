package bpfprog

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/spec"
)

// loadSizes are the widths a load from the context takes.
var loadSizes = map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}

// copyField copies a tracepoint record's character array into the record
// at dst+off, in the widest loads its alignment allows (the verifier
// checks each load from the context against the event's size).
func copyField(f *spec.CtxField, dst asm.Register, off int16) asm.Instructions {
	var in asm.Instructions
	for done := 0; done < f.Size; {
		n := 8
		for n > 1 && ((int(f.Offset)+done)%n != 0 || f.Size-done < n) {
			n /= 2
		}
		in = append(in,
			asm.LoadMem(asm.R1, rCtx, f.Offset+int16(done), loadSizes[n]),
			asm.StoreMem(dst, off+int16(done), asm.R1, loadSizes[n]))
		done += n
	}
	return in
}

// KernelSites makes the programs of tracepoint sites tracepoint programs
// and, with pid, has them return at once for other processes: a
// tracepoint fires for every process, a uprobe's link filters by itself.
func KernelSites(cs *ebpf.CollectionSpec, s *spec.Spec, pid int) {
	for i, p := range s.Probes {
		for j, site := range p.Sites {
			prog := cs.Programs[spec.ProgramName(i, j)]
			if site.Kind != spec.SiteTracepoint || prog == nil {
				continue
			}
			prog.Type = ebpf.TracePoint
			if pid > 0 {
				prog.Instructions = prepend(onlyProcess(pid), prog.Instructions)
			}
		}
	}
}

func onlyProcess(pid int) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JEq.Imm(asm.R0, int32(pid), "only_process"),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
		asm.Mov.Reg(asm.R1, asm.R6).WithSymbol("only_process"),
	}
}

// copyDataLoc copies a tracepoint record's __data_loc text (at most
// StringMax bytes) into the record at dst+off+8, its length at dst+off.
func copyDataLoc(f *spec.CtxField, dst asm.Register, off int16, fail string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R3, rCtx, f.Offset, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.RSh.Imm(asm.R2, 16), // the length
		asm.And.Imm(asm.R3, 0xffff),
		asm.JLE.Imm(asm.R2, spec.StringMax, fail+"_dl"),
		asm.Mov.Imm(asm.R2, spec.StringMax),
		asm.StoreMem(dst, off, asm.R2, asm.DWord).WithSymbol(fail + "_dl"),
		asm.Add.Reg(asm.R3, rCtx), // where the text is
		asm.Mov.Reg(asm.R1, dst),
		asm.Add.Imm(asm.R1, int32(off)+8),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, fail),
	}
}

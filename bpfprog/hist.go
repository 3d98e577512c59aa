package bpfprog

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/bpfasm"
	"github.com/binscope/binscope/spec"
)

// In-kernel aggregation (the ftrace hist-trigger idea): a probe's first
// argument is the key, its second (optional) the value. Each hit adds one
// to the key's count, the value to its sum, and one to the value's log2
// bucket, in a hash map that user space reads at the end.
const (
	histKeySlot = -40 - spec.HistKeySize // below the other stack slots
	histValSlot = histKeySlot - 8
)

// HistPrograms builds aggregation programs for s: like Programs, with a
// "hist" map in place of the ring buffer.
func HistPrograms(s *spec.Spec) (*ebpf.CollectionSpec, error) {
	a, cs, err := baseCollection(s)
	if err != nil {
		return nil, err
	}
	cs.Maps["hist"] = &ebpf.MapSpec{Name: "hist", Type: ebpf.Hash, KeySize: spec.HistKeySize, ValueSize: spec.HistValueSize, MaxEntries: 1 << 14}
	// A zeroed value to create keys from.
	cs.Maps["zero"] = &ebpf.MapSpec{Name: "zero", Type: ebpf.Array, KeySize: 4, ValueSize: spec.HistValueSize, MaxEntries: 1}
	addMarks(cs, s)
	for i, p := range s.Probes {
		for j, site := range p.Sites {
			if site.Kind == spec.SiteCapture {
				return nil, fmt.Errorf("%s: hist does not keep entry values for %%return", p.Def)
			}
			var insns asm.Instructions
			var err error
			switch {
			case site.Kind == spec.SiteClear:
				insns, err = clearProgram(a, site.Mark)
			case len(site.Args) == 0 || len(site.Args) > 2:
				return nil, fmt.Errorf("%s: hist needs a key and at most a value", p.Def)
			default:
				insns, err = histProgram(a, i, j, site)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: site %#x: %w", p.Def, site.Addr, err)
			}
			name := spec.ProgramName(i, j)
			cs.Programs[name] = &ebpf.ProgramSpec{Name: name, Type: ebpf.Kprobe, License: "GPL", Instructions: insns}
		}
	}
	return cs, nil
}

// widen makes the number a fetch of fewer than 8 bytes left in the stack
// slot at off what its type says over 64 bits: sign-extended for s8..s32,
// zero-extended otherwise. A register holds more than the value's bytes
// (an int's upper half is whatever the caller left there), so a sum, a
// bucket or a key made from the whole slot would be wrong.
func widen(f spec.Fetch, off int16) asm.Instructions {
	if f.Size <= 0 || f.Size >= 8 || !numeric(f.Type) {
		return nil
	}
	in := asm.Instructions{asm.LoadMem(asm.R1, asm.RFP, off, asm.DWord)}
	in = append(in, widenR1(f.Size, f.Type[0] == 's')...)
	return append(in, asm.StoreMem(asm.RFP, off, asm.R1, asm.DWord))
}

// widenR1 makes the low size bytes of R1 its 64 bits, sign-extended or
// not.
func widenR1(size int64, signed bool) asm.Instructions {
	if size <= 0 || size >= 8 {
		return nil
	}
	right := asm.RSh
	if signed {
		right = asm.ArSh
	}
	shift := int32(64 - 8*size)
	return asm.Instructions{asm.LSh.Imm(asm.R1, shift), right.Imm(asm.R1, shift)}
}

// numeric reports the fetch types that are one number: u8..u64, s8..s64,
// x8..x64, f32, f64.
func numeric(typ string) bool {
	switch typ {
	case "string", "cstring", "bytes", "iface", "struct", "":
		return false
	}
	return true
}

func histProgram(a *arch.Arch, i, j int, site spec.Site) (asm.Instructions, error) {
	label := func(s string) string { return fmt.Sprintf("h_%s_%d_%d", s, i, j) }
	in := asm.Instructions{asm.Mov.Reg(rCtx, asm.R1), asm.Mov.Imm(rOK, 0)}
	fl, err := siteFilters(a, i, site, "", label)
	if err != nil {
		return nil, err
	}
	in = append(in, fl...)
	in = append(in, count(int32(i))...)
	fetch, err := histFetch(a, i, site, label)
	if err != nil {
		return nil, err
	}
	in = append(in, fetch...)
	in = append(in, histEntry(label)...)
	if len(site.Args) == 2 && site.Args[1].Unavailable == "" {
		in = append(in, histAdd(site.Args[1].Type[0] == 's', label)...)
	}
	in = append(in, asm.Mov.Imm(asm.R0, 0).WithSymbol(label("out")), asm.Return())
	return in, nil
}

// histFetch writes the key of probe i's site at histKeySlot (the probe,
// the rOK bits, the key's value) and its value, if it has one, at
// histValSlot.
func histFetch(a *arch.Arch, i int, site spec.Site, label func(string) string) (asm.Instructions, error) {
	var in asm.Instructions
	for off := int16(0); off < spec.HistKeySize; off += 8 {
		in = append(in, bpfasm.StoreImm64(asm.RFP, histKeySlot+off, 0))
	}
	in = append(in, asm.StoreImm(asm.RFP, histKeySlot, int64(i), asm.Word))
	k := site.Args[0]
	if k.Unavailable == "" {
		code, err := fetchProgram(a, k, site.Addr, asm.RFP, histKeySlot+8, label("key"), 0, false)
		if err != nil {
			return nil, err
		}
		in = append(in, code...)
		in = append(in, widen(k, histKeySlot+8)...)
	}
	if len(site.Args) == 2 && site.Args[1].Unavailable == "" {
		in = append(in, bpfasm.StoreImm64(asm.RFP, histValSlot, 0))
		code, err := fetchProgram(a, site.Args[1], site.Addr, asm.RFP, histValSlot, label("val"), 1, false)
		if err != nil {
			return nil, err
		}
		in = append(in, code...)
		in = append(in, widen(site.Args[1], histValSlot)...)
	}
	return append(in, asm.StoreMem(asm.RFP, histKeySlot+4, rOK, asm.Word)), nil
}

// histEntry finds the key's entry in the hist map, inserting a zeroed one
// for a new key, and counts the hit in it; R0 points to the entry.
func histEntry(label func(string) string) asm.Instructions {
	in := bpfasm.Lookup("hist", histKeySlot, "")
	in = append(in, asm.JNE.Imm(asm.R0, 0, label("have")))
	// A new key: insert it with the zeroed value, then look it up.
	in = append(in, asm.StoreImm(asm.RFP, slotKey, 0, asm.Word))
	in = append(in, bpfasm.Lookup("zero", slotKey, label("out"))...)
	in = append(in,
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.LoadMapPtr(asm.R1, 0).WithReference("hist"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, histKeySlot),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST: another CPU may have made it
		asm.FnMapUpdateElem.Call(),
	)
	in = append(in, bpfasm.Lookup("hist", histKeySlot, label("out"))...)
	return append(in,
		asm.Mov.Imm(asm.R1, 1).WithSymbol(label("have")),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
	)
}

// histAdd adds the value at histValSlot, when it was read, to the sum of
// the entry R0 points to and counts it in its log2 bucket, or with signed
// in the negatives when below zero.
func histAdd(signed bool, label func(string) string) asm.Instructions {
	// Only a value that was read counts in the sum and the buckets.
	in := asm.Instructions{
		asm.Mov.Reg(asm.R1, rOK),
		asm.And.Imm(asm.R1, 2),
		asm.JEq.Imm(asm.R1, 0, label("out")),
		asm.LoadMem(asm.R3, asm.RFP, histValSlot, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Add.Imm(asm.R1, 8),
		asm.StoreXAdd(asm.R1, asm.R3, asm.DWord),
	}
	if signed { // a value below zero counts in the negatives
		in = append(in,
			asm.JSGE.Imm(asm.R3, 0, label("pos")),
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.Add.Imm(asm.R1, 16+8*spec.HistBuckets),
			asm.Mov.Imm(asm.R3, 1),
			asm.StoreXAdd(asm.R1, asm.R3, asm.DWord),
			asm.Ja.Label(label("out")),
		)
	}
	// R2 = bit length of R3 (0 for 0), by halving.
	in = append(in, asm.Mov.Imm(asm.R2, 0).WithSymbol(label("pos")))
	for _, sh := range []int32{32, 16, 8, 4, 2, 1} {
		skip := label(fmt.Sprintf("sh%d", sh))
		in = append(in,
			asm.Mov.Reg(asm.R4, asm.R3),
			asm.RSh.Imm(asm.R4, sh),
			asm.JEq.Imm(asm.R4, 0, skip),
			asm.Mov.Reg(asm.R3, asm.R4),
			asm.Add.Imm(asm.R2, sh),
			asm.Mov.Reg(asm.R4, asm.R4).WithSymbol(skip),
		)
	}
	return append(in,
		asm.Add.Reg(asm.R2, asm.R3), // the last bit: 1 unless the value was 0
		asm.JLE.Imm(asm.R2, spec.HistBuckets-1, label("inrange")),
		asm.Mov.Imm(asm.R2, spec.HistBuckets-1),
		asm.LSh.Imm(asm.R2, 3).WithSymbol(label("inrange")),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Add.Imm(asm.R1, 16), // the buckets follow count and sum
		asm.Add.Reg(asm.R1, asm.R2),
		asm.Mov.Imm(asm.R3, 1),
		asm.StoreXAdd(asm.R1, asm.R3, asm.DWord),
	)
}

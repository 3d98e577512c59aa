package bpfprog

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Identity is what makes two programs interchangeable: their type and
// license, their bytecode with every jump resolved (labels' names do not
// count, only where they lead) and the maps their loads name. Sites whose
// programs have the same identity can share one program and one link.
func Identity(p *ebpf.ProgramSpec) (string, error) {
	insns := make(asm.Instructions, len(p.Instructions))
	copy(insns, p.Instructions) // Marshal resolves the jumps in place
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d %d %s\n", p.Type, p.AttachType, p.License)
	if err := insns.Marshal(&b, binary.LittleEndian); err != nil {
		return "", fmt.Errorf("program %s: %w", p.Name, err)
	}
	for k, ins := range insns {
		if ins.IsLoadFromMap() {
			fmt.Fprintf(&b, "\n%d %s", k, ins.Reference())
		}
	}
	return b.String(), nil
}

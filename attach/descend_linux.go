package attach

import (
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/bpfprog"
)

// KernelTaskOffsets reads struct task_struct's real_parent and tgid
// offsets from the running kernel's BTF (/sys/kernel/btf/vmlinux).
func KernelTaskOffsets() (bpfprog.TaskOffsets, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return bpfprog.TaskOffsets{}, fmt.Errorf("the kernel's BTF: %v", err)
	}
	var task *btf.Struct
	if err := spec.TypeByName("task_struct", &task); err != nil {
		return bpfprog.TaskOffsets{}, fmt.Errorf("the kernel's BTF: task_struct: %v", err)
	}
	var off bpfprog.TaskOffsets
	found := 0
	// Members may sit in anonymous structs (randomized layouts).
	var walk func(ms []btf.Member, base uint32, depth int)
	walk = func(ms []btf.Member, base uint32, depth int) {
		for _, m := range ms {
			at := base + m.Offset.Bytes()
			switch m.Name {
			case "real_parent":
				off.RealParent, found = int32(at), found+1
			case "tgid":
				off.Tgid, found = int32(at), found+1
			case "":
				if depth < 4 {
					switch t := btf.UnderlyingType(m.Type).(type) {
					case *btf.Struct:
						walk(t.Members, at, depth+1)
					case *btf.Union:
						walk(t.Members, at, depth+1)
					}
				}
			}
		}
	}
	walk(task.Members, 0, 0)
	if found != 2 {
		return bpfprog.TaskOffsets{}, fmt.Errorf("the kernel's BTF: task_struct has no real_parent or tgid")
	}
	return off, nil
}

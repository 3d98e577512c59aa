package arch_test

import (
	"debug/elf"
	"os"
	"runtime"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestPtRegsKernel: the table's struct pt_regs is the running kernel's, as
// its BTF describes it: the same members, names and offsets, in order.
func TestPtRegsKernel(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the kernel's BTF describes the host's pt_regs; the table is checked on amd64")
	}
	const vmlinux = "/sys/kernel/btf/vmlinux"
	if _, err := os.Stat(vmlinux); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	spec, err := btf.Load(vmlinux, nil)
	if err != nil {
		t.Fatal(err)
	}
	found, err := spec.Find("pt_regs")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := found[0].(*types.Struct)
	if !ok {
		t.Fatalf("pt_regs is a %T", found[0])
	}
	a, err := arch.ForMachine(elf.EM_X86_64)
	if err != nil {
		t.Fatal(err)
	}
	got := a.PtRegsLayout()
	if len(got) != len(s.Members) || len(got) < 21 {
		t.Fatalf("table has %d members, the kernel %d", len(got), len(s.Members))
	}
	for i, m := range s.Members {
		g := got[i]
		name := m.Name
		if u, ok := m.Type.(*types.Struct); ok && name == "" && len(u.Members) > 0 {
			name = u.Members[0].Name // kernels with FRED: union { u16 cs; u64 csx; ... }
		}
		if g.Member != name || int64(g.Offset) != m.ByteOffset() || a.PtRegsMember(g.Reg) != name || a.PtRegs[g.Reg] != g.Offset {
			t.Errorf("member %d: table %+v, kernel %s at %d", i, g, name, m.ByteOffset())
		}
	}
	if b, _ := types.Sizeof(s); b != int64(got[len(got)-1].Offset)+8 {
		t.Errorf("kernel's pt_regs is %d bytes, the table's %d", b, got[len(got)-1].Offset+8)
	}
	if x, err := arch.ForName("x86_64"); x != a || err != nil {
		t.Errorf("ForName(x86_64) = %v, %v", x, err)
	}
}

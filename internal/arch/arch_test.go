package arch_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
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

// TestPtRegsHeader: amd64's pt_regs offsets and size are those of the
// system's uapi header (asm/ptrace.h, where each register is named as
// the table names it, in lower case), as gcc lays the struct out.
func TestPtRegsHeader(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		testutil.Skipf(t, "the header is amd64's on an amd64 host")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	a, err := arch.ForMachine(elf.EM_X86_64)
	if err != nil {
		t.Fatal(err)
	}
	var regs []string
	for r := range a.PtRegs {
		regs = append(regs, r)
	}
	sort.Strings(regs)
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <asm/ptrace.h>\nint main(void) {\n")
	src.WriteString("\tprintf(\"size %zu\\n\", sizeof(struct pt_regs));\n")
	for _, r := range regs {
		fmt.Fprintf(&src, "\tprintf(\"%s %%zu\\n\", offsetof(struct pt_regs, %s));\n", r, strings.ToLower(r))
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	c, bin := filepath.Join(dir, "regs.c"), filepath.Join(dir, "regs")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, n, _ := strings.Cut(l, " ")
		got[name], _ = strconv.Atoi(n)
	}
	if l := a.PtRegsLayout(); got["size"] != int(l[len(l)-1].Offset)+8 {
		t.Errorf("sizeof(struct pt_regs) %d, table %d", got["size"], l[len(l)-1].Offset+8)
	}
	for _, r := range regs {
		if got[r] != int(a.PtRegs[r]) {
			t.Errorf("%s: offset %d in the header, %d in the table", r, got[r], a.PtRegs[r])
		}
	}
	if len(regs) < 21 {
		t.Errorf("only %d registers compared", len(regs))
	}
}

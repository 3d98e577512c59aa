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

	"github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/testutil"
)

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
	if got["size"] != a.PtRegsSize {
		t.Errorf("sizeof(struct pt_regs) %d, table %d", got["size"], a.PtRegsSize)
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

// TestPtRegsKernel: the kernel's names of the registers (PtRegsC, which
// generated C and bpftrace use) are the running kernel's struct pt_regs
// members at the table's offsets, as its BTF says.
func TestPtRegsKernel(t *testing.T) {
	a, err := arch.Host()
	if err != nil {
		testutil.Skipf(t, "%v", err)
	}
	if a.Name != "x86_64" {
		testutil.Skipf(t, "the kernel's pt_regs names are compared on x86_64")
	}
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		testutil.Skipf(t, "the kernel's BTF: %v", err)
	}
	var regs *btf.Struct
	if err := spec.TypeByName("pt_regs", &regs); err != nil {
		t.Fatal(err)
	}
	// Newer kernels put cs and ss in anonymous unions (with FRED's
	// views of them): their members count at the union's offset.
	at := map[string]int{}
	var walk func(ms []btf.Member, base int)
	walk = func(ms []btf.Member, base int) {
		for _, m := range ms {
			off := base + int(m.Offset.Bytes())
			switch u := btf.UnderlyingType(m.Type).(type) {
			case *btf.Union:
				if m.Name == "" {
					walk(u.Members, off)
					continue
				}
			case *btf.Struct:
				if m.Name == "" {
					walk(u.Members, off)
					continue
				}
			}
			at[m.Name] = off
		}
	}
	walk(regs.Members, 0)
	if int(regs.Size) != a.PtRegsSize {
		t.Errorf("the kernel's pt_regs has %d bytes, the table %d", regs.Size, a.PtRegsSize)
	}
	for r, c := range a.PtRegsC {
		off, ok := at[c]
		if !ok || off != int(a.PtRegs[r]) {
			t.Errorf("%s: the kernel's member %s at %d (found %v), the table's offset %d", r, c, off, ok, a.PtRegs[r])
		}
	}
	if len(a.PtRegsC) < 21 {
		t.Errorf("only %d registers compared", len(a.PtRegsC))
	}
}

package probe

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/internal/x86"
)

// TestLeaksSP: the instructions that make a stack address a value (an lea
// from RSP, RSP copied, pushed or added) against those that only use the
// stack (loads, stores, the stack pointer's own adjustment), each checked
// against objdump's reading of the same bytes.
func TestLeaksSP(t *testing.T) {
	cases := []struct {
		code []byte
		asm  string // objdump's spelling
		leak bool
	}{
		{[]byte{0x48, 0x8d, 0x04, 0x24}, "lea (%rsp),%rax", true},
		{[]byte{0x48, 0x89, 0x04, 0x24}, "mov %rax,(%rsp)", false},
		{[]byte{0x48, 0x83, 0xec, 0x28}, "sub $0x28,%rsp", false},
		{[]byte{0x48, 0x89, 0xe5}, "mov %rsp,%rbp", true},
		{[]byte{0x54}, "push %rsp", true},
		{[]byte{0x48, 0x8b, 0x04, 0x24}, "mov (%rsp),%rax", false},
		{[]byte{0x48, 0x8d, 0x64, 0x24, 0x08}, "lea 0x8(%rsp),%rsp", true},
		{[]byte{0x48, 0x89, 0xec}, "mov %rbp,%rsp", false},
		{[]byte{0x48, 0x01, 0xe0}, "add %rsp,%rax", true},
	}
	var all []byte
	for _, c := range cases {
		in, err := x86.Decode(c.code)
		if err != nil || in.Len != len(c.code) {
			t.Fatalf("%s: %v (length %d)", c.asm, err, in.Len)
		}
		if got := leaksSP(in); got != c.leak {
			t.Errorf("%s: leaks %v, want %v", c.asm, got, c.leak)
		}
		all = append(all, c.code...)
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		testutil.Skipf(t, "objdump not found")
	}
	f := t.TempDir() + "/code.bin"
	if err := os.WriteFile(f, all, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("objdump", "-D", "-b", "binary", "-mi386:x86-64", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, c := range cases {
		if !strings.Contains(text, c.asm) {
			t.Errorf("objdump does not read %x as %s", c.code, c.asm)
		}
	}
}

package x86

import (
	"debug/elf"
	"fmt"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestRefusalMatchesKernel: Refusal against the running kernel, which
// analyses each crafted instruction of corpus when a uprobe is attached
// on it in this process. Refusal must never accept what the kernel
// refuses; it may refuse what the kernel accepts only where x86asm cannot
// decode the instruction.
func TestRefusalMatchesKernel(t *testing.T) {
	insns := corpus()
	verdicts := kernelVerdicts(t, insns)
	var agree, refusedByKernel, undecoded int
	for i, in := range insns {
		ours, kernel := Refusal(in), verdicts[i]
		_, derr := Length(in)
		switch {
		case ours == "" && kernel != nil:
			t.Errorf("% x: accepted here, the kernel refuses it: %v", in[:8], kernel)
		case ours != "" && kernel == nil && derr == nil:
			t.Errorf("% x: refused here (%s), the kernel accepts it", in[:8], ours)
		case ours != "" && kernel == nil:
			undecoded++
		default:
			agree++
		}
		if kernel != nil {
			refusedByKernel++
		}
	}
	t.Logf("%d instructions: %d verdicts agree, %d refused by the kernel, %d accepted by it but not decodable here", len(insns), agree, refusedByKernel, undecoded)
	if len(insns) < 1500 || agree < 1400 || refusedByKernel < 150 {
		t.Errorf("too few instructions compared: %d, %d agreeing, %d refused by the kernel", len(insns), agree, refusedByKernel)
	}
}

// TestRefusalMatchesKernelOnGlibc: Refusal against the running kernel on
// the instructions of real code: glibc's exported functions decoded from
// their first bytes, one instruction of each shape (its first three
// bytes and its length), which brings the prefixes and VEX and EVEX
// encodings compilers and glibc's assembly really use.
func TestRefusalMatchesKernelOnGlibc(t *testing.T) {
	lib := testutil.RealBinary(t, "libc")
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var insns [][]byte
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || len(insns) >= 4000 {
			continue
		}
		code := make([]byte, s.Size)
		if _, err := readAt(f, code, s.Value); err != nil {
			continue
		}
		for off := 0; off < len(code); {
			n, err := Length(code[off:])
			if err != nil {
				break
			}
			in := code[off : off+n]
			key := fmt.Sprintf("%x/%d", in[:min(3, n)], n)
			if !seen[key] && n < slot {
				seen[key] = true
				insns = append(insns, append([]byte(nil), in...))
			}
			off += n
		}
	}
	verdicts := kernelVerdicts(t, insns)
	agree, refused := 0, 0
	for i, in := range insns {
		ours, kernel := Refusal(in), verdicts[i]
		switch {
		case ours == "" && kernel != nil:
			t.Errorf("% x: accepted here, the kernel refuses it: %v", in, kernel)
		case ours != "" && kernel == nil:
			t.Errorf("% x: refused here (%s), the kernel accepts it", in, ours)
		default:
			agree++
		}
		if kernel != nil {
			refused++
		}
	}
	t.Logf("%d shapes of glibc's instructions: %d verdicts agree, %d refused by the kernel", len(insns), agree, refused)
	if len(insns) < 1500 || refused < 5 {
		t.Errorf("too few: %d instructions, %d refused by the kernel", len(insns), refused)
	}
}

// readAt reads the bytes at virtual address addr of f.
func readAt(f *elf.File, b []byte, addr uint64) (int, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+uint64(len(b)) <= p.Vaddr+p.Filesz {
			return p.ReadAt(b, int64(addr-p.Vaddr))
		}
	}
	return 0, fmt.Errorf("%#x: in no loaded segment", addr)
}

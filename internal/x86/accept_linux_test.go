package x86

import (
	"testing"
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

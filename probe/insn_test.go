package probe

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestDecodeObjdump: every instruction the resolver decodes in a program
// with AVX code before calls (vzeroupper, which x86asm takes a byte too
// many for) starts where objdump says an instruction starts.
func TestDecodeObjdump(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "vex")
	if out, err := exec.Command("gcc", "-O2", "-mavx2", "-g", "-o", bin, filepath.Join("testdata", "vex", "vex.c")).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	starts := map[uint64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, ":\t"); i > 0 {
			if a, err := strconv.ParseUint(strings.TrimSpace(l[:i]), 16, 64); err == nil {
				starts[a] = true
			}
		}
	}
	r := openResolver(t, bin)
	if err := r.t.all(); err != nil {
		t.Fatal(err)
	}
	n, vz := 0, 0
	for _, fn := range r.t.model.Funcs() {
		if fn.LowPC == 0 || fn.Size == 0 {
			continue
		}
		err := r.t.decode(&types.Func{Name: fn.Name, LowPC: fn.LowPC}, fn.LowPC, fn.LowPC+fn.Size, func(a uint64, in x86asm.Inst) {
			n++
			if in.Op == x86asm.VZEROUPPER {
				vz++
			}
			if !starts[a] {
				t.Errorf("%s: %#x starts no instruction objdump shows", fn.Name, a)
			}
		})
		if err != nil {
			t.Errorf("%s: %v", fn.Name, err)
		}
	}
	if n < 50 || vz == 0 {
		t.Errorf("%d instructions decoded, %d vzeroupper: the program has no AVX code before a call", n, vz)
	}
}

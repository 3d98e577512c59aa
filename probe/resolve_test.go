package probe_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/probe"
)

// objdump lists fn's instructions as objdump decodes them: address and
// mnemonic.
func objdump(t *testing.T, bin string, lo, hi uint64) [][2]string {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", fmt.Sprintf("--start-address=%#x", lo), fmt.Sprintf("--stop-address=%#x", hi), bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	var insns [][2]string
	for _, m := range regexp.MustCompile(`(?m)^\s*([0-9a-f]+):\s+(\S+)`).FindAllStringSubmatch(string(out), -1) {
		insns = append(insns, [2]string{m[1], m[2]})
	}
	return insns
}

// TestPlacement: on code that starts with endbr64 (CET), the entry probe
// goes on the push after it, which the kernel emulates, and the return
// probes on exactly the ret instructions objdump shows.
func TestPlacement(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "cet")
	if out, err := exec.Command(gcc, "-O2", "-g", "-fcf-protection=full", "-o", bin, filepath.Join("testdata", "cet", "cet.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	f, err := dwarf.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := probe.NewResolver(f)
	if err != nil {
		t.Fatal(err)
	}
	entry, _ := probe.Parse("f a b")
	ret, _ := probe.Parse("f%return $retval")
	s, err := r.Spec([]*probe.Def{entry, ret})
	if err != nil {
		t.Fatal(err)
	}
	fns, _ := f.Functions(nil)
	var lo, hi uint64
	for _, fn := range fns {
		if fn.Name == "f" {
			lo, hi = fn.LowPC, fn.LowPC+fn.Size
		}
	}
	insns := objdump(t, bin, lo, hi)
	if len(insns) < 3 || insns[0][1] != "endbr64" || !strings.HasPrefix(insns[1][1], "push") {
		t.Fatalf("gcc did not start f with endbr64; push: %v", insns)
	}
	if got := fmt.Sprintf("%x", s.Probes[0].Sites[0].Addr); got != insns[1][0] {
		t.Errorf("entry probe at %s; the push is at %s", got, insns[1][0])
	}
	var rets []string
	for _, in := range insns {
		if strings.HasPrefix(in[1], "ret") {
			rets = append(rets, in[0])
		}
	}
	var got []string
	for _, site := range s.Probes[1].Sites {
		got = append(got, strconv.FormatUint(site.Addr, 16))
	}
	if len(rets) == 0 || strings.Join(got, " ") != strings.Join(rets, " ") {
		t.Errorf("return probes at %v; objdump's rets are at %v", got, rets)
	}
}

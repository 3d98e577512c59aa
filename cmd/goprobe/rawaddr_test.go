package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestRawAddress probes BIN:0xADDR, addresses taken from objdump's
// disassembly of a recursion the program counts itself (depth=N, so N+1
// calls of down): at down's entry (nm's address) and at each instruction
// objdump shows before its first branch, every call is counted, N+1;
// the parameter n read there is N, N-1, ..., 0, the recursion's. An
// address inside an instruction (objdump starts none there) is refused
// with a reason, and nothing attached.
func TestRawAddress(t *testing.T) {
	needBPF(t)
	bin := buildDeep(t)
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", bin).Output()
	if err != nil {
		testutil.Skipf(t, "objdump: %v", err)
	}
	body := regexp.MustCompile(`(?s)\n([0-9a-f]+) <down>:\n(.*?)\n\n`).FindSubmatch(out)
	if body == nil {
		t.Fatalf("objdump shows no down:\n%s", out)
	}
	var straight []uint64 // instructions before the first branch, entry included
	for _, m := range regexp.MustCompile(`(?m)^\s+([0-9a-f]+):\t(\S+)`).FindAllStringSubmatch(string(body[2]), -1) {
		if strings.HasPrefix(m[2], "j") || m[2] == "call" || m[2] == "ret" {
			break
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		straight = append(straight, a)
	}
	if len(straight) < 2 {
		t.Fatalf("objdump shows %d instructions before down's first branch, want 2 or more:\n%s", len(straight), body[2])
	}
	const depth = 7
	args := []string{"stat", "--json"}
	for _, a := range straight {
		args = append(args, fmt.Sprintf("%s:%#x", bin, a))
	}
	code, outs, errs := runGoprobe(append(args, "--", bin, strconv.Itoa(depth))...)
	if code != 0 || !strings.Contains(outs, fmt.Sprintf("depth=%d", depth)) {
		t.Fatalf("exit %d:\n%s\n%s", code, outs, errs)
	}
	var stat struct{ Probes []struct{ Count int } }
	for _, l := range strings.Split(outs, "\n") {
		if strings.HasPrefix(l, "{") {
			if err := json.Unmarshal([]byte(l), &stat); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(stat.Probes) != len(straight) {
		t.Fatalf("%d probes counted, want %d:\n%s", len(stat.Probes), len(straight), outs)
	}
	for i, p := range stat.Probes {
		if p.Count != depth+1 {
			t.Errorf("%#x: %d hits, the program made %d calls", straight[i], p.Count, depth+1)
		}
	}
	code, outs, errs = runGoprobe("trace", fmt.Sprintf("%s:%#x n", bin, straight[1]), "--", bin, strconv.Itoa(depth))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ns := regexp.MustCompile(`\bn=(-?\d+)`).FindAllStringSubmatch(outs, -1)
	var got []string
	for _, m := range ns {
		got = append(got, m[1])
	}
	var want []string
	for n := depth; n >= 0; n-- {
		want = append(want, strconv.Itoa(n))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("n at %#x: %v, the recursion passes %v", straight[1], got, want)
	}
	starts := testutil.InstructionStarts(t, bin)
	inside := straight[0] + 1
	if starts[inside] {
		t.Fatalf("objdump starts an instruction at %#x: no address inside one to refuse", inside)
	}
	code, _, errs = runGoprobe("stat", "-x", bin, fmt.Sprintf("%#x", inside), "--", bin, "1")
	if code == 0 || !strings.Contains(errs, "not an instruction boundary") || strings.Contains(errs, "attached") {
		t.Errorf("%#x inside an instruction: exit %d, %q; want a refusal and nothing attached", inside, code, errs)
	}
}

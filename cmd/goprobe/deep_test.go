package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestProfileDeepStack: a program spinning at the bottom of a recursion 100
// calls deep says so ("depth=100"); the profile's stacks hold all of it:
// 101 frames of down() under main, below the 127-frame bound (at 32 the
// stacks were cut at 30 of them), and none is counted truncated.
func TestProfileDeepStack(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	bin := buildWith(t, dir, "gcc", "-O2", "-g", "-o", "BIN", filepath.Join(dir, "deep.c"))
	folded := filepath.Join(t.TempDir(), "deep.folded")
	code, out, errs := runGoprobe("profile", "-F", "499", "--top", "0", "--folded", folded, "--", bin, "100")
	if code != 0 || !strings.Contains(out+errs, "depth=100") {
		t.Fatalf("exit %d; the program did not report its depth:\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, " 0 truncated at 127 frames") {
		t.Errorf("stacks truncated:\n%s", errs)
	}
	stacks, counts := readFolded(t, folded)
	var whole, all uint64
	for i, s := range stacks {
		downs := 0
		for _, f := range s {
			if f == "down" {
				downs++
			}
		}
		all += counts[i]
		if downs == 101 && strings.Contains(strings.Join(s, ";"), "main;down") {
			whole += counts[i]
		}
	}
	if all < 100 || whole < all*8/10 {
		t.Errorf("%d of %d samples hold the 101 frames of down() under main\n%s", whole, all, errs)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCorruptRecord: a file with one corrupt record prints the other
// types, then one line naming the file, section and offset, exit status 1.
func TestCorruptRecord(t *testing.T) {
	c := testutil.Fixture(t, "c-layouts")
	bad, owner, at := testutil.CorruptMember(t, c.Path)
	_, want, _ := run(c.Path)
	code, stdout, stderr := run(bad)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: ", bad, at)
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
		t.Errorf("stderr %q: want one line starting %q", stderr, line)
	}
	if strings.Contains(stdout, "struct "+owner+" {") {
		t.Errorf("struct %s, whose member is corrupt, was printed", owner)
	}
	n := strings.Count(want, "\n};")
	if got := strings.Count(stdout, "\n};"); n < 10 || got != n-1 {
		t.Errorf("%d types printed, want %d (all but struct %s)", got, n-1, owner)
	}
}

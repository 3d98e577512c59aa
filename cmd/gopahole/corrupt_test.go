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

// TestCorruptUnitHeader: a damaged unit header (testutil.CorruptUnitHeaders)
// prints one line naming the file, .debug_info and the unit's offset, and
// exits 1; dwarf's TestCorruptUnitHeader compares the errors with
// debug/dwarf's.
func TestCorruptUnitHeader(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, d := range testutil.CorruptUnitHeaders(t) {
		code, stdout, stderr := run(d.Path)
		line := fmt.Sprintf("gopahole: %s: section .debug_info at offset %#x: unit header: ", d.Path, d.Unit)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q: want 1, none, one line starting %q", d.Name, code, len(stdout), stderr, line)
		}
	}
}

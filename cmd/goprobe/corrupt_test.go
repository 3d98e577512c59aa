package main

import (
	stddwarf "debug/dwarf"
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCorruptDIEOneLine: goprobe gen on a program with a DIE that does not read
// (testutil.CorruptDIEs, whose offset readelf names) writes the probes of
// a function whose subprogram is not lost (debug/dwarf's offsets) as it
// does for the undamaged program, and one stderr line names the file,
// .debug_info and the DIE, once however many walks of the file meet it
// (a function whose subprogram is lost is looked for twice).
func TestCorruptDIEOneLine(t *testing.T) {
	testutil.EachCorruptDIE(t, func(t *testing.T, dd testutil.DIEDamage, d *stddwarf.Data) {
		line := fmt.Sprintf("goprobe: %s: section .debug_info at offset %#x: unreadable DIE: ", dd.Bad, dd.Off)
		count := map[bool]int{}
		r := d.Reader()
		for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
			name, _ := e.Val(stddwarf.AttrName).(string)
			if e.Tag != stddwarf.TagSubprogram || !strings.HasPrefix(name, "f_") {
				continue
			}
			lost := dd.Lost(e.Offset)
			count[lost]++
			code, got, stderr := runGoprobe("gen", "--format=perf", "-x", dd.Bad, name)
			if strings.Count(stderr, "unreadable DIE") != 1 || !strings.HasPrefix(stderr, line) {
				t.Errorf("%s (lost %v): stderr %q: want one line starting %q", name, lost, stderr, line)
			}
			if lost {
				// An argument by name: the debug info that names them is
				// lost, and the message says so, not that there is none.
				_, _, stderr = runGoprobe("gen", "--format=perf", "-x", dd.Bad, name+" x")
				if want := fmt.Sprintf("lost the debug info of %s with the unreadable DIE at %#x", name, dd.Off); !strings.Contains(stderr, want) {
					t.Errorf("%s x: stderr %q: want %q", name, stderr, want)
				}
				continue
			}
			_, want, _ := runGoprobe("gen", "--format=perf", "-x", dd.Good, name)
			if code != 0 || got == "" || strings.Count(stderr, "\n") != 1 || got != strings.ReplaceAll(want, dd.Good, dd.Bad) {
				t.Errorf("%s: exit %d, stderr %q, printed:\n%s\nwant exit 0, one line, and as the undamaged program:\n%s", name, code, stderr, got, want)
			}
		}
		t.Logf("functions lost: %v", count)
		if count[false] < 4 || dd.Name == "subprogram" && count[true] < 1 {
			t.Errorf("%v: want 4 or more kept (and one lost for a subprogram damaged)", count)
		}
	})
}

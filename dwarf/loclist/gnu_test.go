package loclist_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/binscope/binscope/dwarf/loclist"
	"github.com/binscope/binscope/internal/testutil"
)

// GNU split lists as readelf prints them: a start/length entry's index
// and length, a view pair's offset, the end of a list.
var (
	gnuStartLength = regexp.MustCompile(`^\s+(?:([0-9a-f]{8}) )?\s*\[(\d+)\] ([0-9a-f]{8}) \(`)
	gnuOffset      = regexp.MustCompile(`^    ([0-9a-f]{8}) `)
)

// TestGNU: every location list of the .dwo files and the .dwp of GCC's
// DWARF 4 split DWARF (the c-split fixture's c-split4 builds) reads as
// readelf prints it: the same entries, with the same .debug_addr index
// and length each, and an expression.
func TestGNU(t *testing.T) {
	dir := filepath.Dir(testutil.Fixture(t, "c-split").Path)
	lists, entries := 0, 0
	for _, path := range []string{filepath.Join(dir, "c-split4.objs", "main.dwo"), filepath.Join(dir, "c-split4.objs", "mix.dwo"),
		filepath.Join(dir, "c-split4-dwp.dwp")} {
		ef, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ef.Section(".debug_loc.dwo").Data()
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("readelf", "--wide", "--debug-dump=loc", path).Output()
		if err != nil {
			testutil.Skipf(t, "readelf: %v", err)
		}
		for off, want := range readelfGNU(t, out) {
			got, err := loclist.GNU(b, off, ef.ByteOrder)
			if err != nil {
				t.Fatalf("%s: list at %#x: %v", path, off, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: list at %#x: %d entries, readelf %d", path, off, len(got), len(want))
			}
			for i, w := range want {
				if g := got[i]; g.Kind != loclist.GNUStartLength || g.A != w[0] || g.B != w[1] || len(g.Expr) == 0 {
					t.Fatalf("%s: list at %#x: entry %d is %+v, readelf's [%d] length %#x", path, off, i, g, w[0], w[1])
				}
			}
			lists++
			entries += len(want)
		}
	}
	t.Logf("%d lists, %d entries", lists, entries)
	if lists < 20 || entries < 40 {
		t.Errorf("%d lists of %d entries compared, want at least 20 and 40", lists, entries)
	}
}

// readelfGNU are the lists of readelf's dump out, by offset: each
// entry's index and length. A line of another kind of entry fails t.
func readelfGNU(t *testing.T, out []byte) map[int64][][2]uint64 {
	lists := map[int64][][2]uint64{}
	start := int64(-1)
	var cur [][2]uint64
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		line := sc.Text()
		switch m := gnuStartLength.FindStringSubmatch(line); {
		case m != nil:
			if start < 0 && m[1] != "" {
				start, _ = strconv.ParseInt(m[1], 16, 64)
			}
			i, _ := strconv.ParseUint(m[2], 10, 64)
			n, _ := strconv.ParseUint(m[3], 16, 64)
			cur = append(cur, [2]uint64{i, n})
		case viewLine.MatchString(line):
			if m := viewLine.FindStringSubmatch(line); m[2] != "location view pair" && start < 0 {
				start, _ = strconv.ParseInt(m[1], 16, 64)
			}
		case endLine.MatchString(line):
			if start < 0 {
				start, _ = strconv.ParseInt(endLine.FindStringSubmatch(line)[1], 16, 64)
			}
			lists[start] = cur
			start, cur = -1, nil
		case gnuOffset.MatchString(line):
			t.Fatalf("readelf: an entry of a kind not read here: %q", line)
		}
	}
	return lists
}

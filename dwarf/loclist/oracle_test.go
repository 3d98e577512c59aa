package loclist_test

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/binscope/binscope/dwarf/loclist"
	"github.com/binscope/binscope/internal/dwarftest"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// TestOracle: every location list a DIE names (DW_AT_location,
// DW_AT_frame_base, ...) reads as the entries readelf prints for it, in
// order with the same [begin, end), for GCC's DWARF 5 lists
// (.debug_loclists: base addresses, offset pairs, the views GCC puts
// beside them or, with -gvariable-location-views=incompat5, in them as
// DW_LLE_GNU_view_pair) and Rust's DWARF 4 lists (.debug_loc).
func TestOracle(t *testing.T) {
	files := map[string][2]int{ // the least lists and entries compared
		testutil.DebugFile(testutil.RealBinary(t, "libc")):      {20_000, 50_000},
		testutil.DebugFile(testutil.RealBinary(t, "libstdc++")): {1500, 4000},
		testutil.Fixture(t, "rust-real").Path:                   {40_000, 100_000},
		viewPairs(t):                                            {5, 10},
	}
	clang := testutil.Fixture(t, "cpp-real-clang").Path
	files[clang] = [2]int{2000, 6000}
	for path, least := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			oracle := readelfLists
			if path == clang {
				oracle = dwarfdumpLists // readelf 2.40 adds no base address to clang's offset pairs
			}
			want := oracle(t, path)
			lists, entries := compareLists(t, path, want)
			t.Logf("%s: %d lists, %d entries", path, lists, entries)
			if lists < least[0] || entries < least[1] {
				t.Errorf("%d lists of %d entries compared, want at least %d and %d", lists, entries, least[0], least[1])
			}
		})
	}
}

// viewPairs builds the c-split fixture's sources with GCC's location
// views inside the lists (DW_LLE_GNU_view_pair).
func viewPairs(t *testing.T) string {
	dir := filepath.Join(testutil.Root(t), "testdata", "fixtures", "c-split")
	bin := filepath.Join(t.TempDir(), "views")
	cmd := exec.Command("gcc", "-O2", "-g", "-gvariable-location-views=incompat5", "-o", bin, "main.c", "mix.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	out, err := exec.Command("readelf", "--debug-dump=loc", bin).Output()
	if err != nil || !bytes.Contains(out, []byte("views for:")) {
		t.Fatalf("readelf shows no view pair in the lists of %s (%v)", bin, err)
	}
	return bin
}

// readelf's lines of a location list: an entry (its begin and end, after
// its offset or on the line after the offset of its views), a base
// address, a view pair and the end of a list.
var (
	entryLine = regexp.MustCompile(`^    (?:([0-9a-f]{8}) )?\s*([0-9a-f]{16}) ([0-9a-f]{16}) \(`)
	viewLine  = regexp.MustCompile(`^    ([0-9a-f]{8}) v[0-9a-f]+ v[0-9a-f]+ (location view pair|views at|views for)`)
	baseLine  = regexp.MustCompile(`^    ([0-9a-f]{8}) .*\(base address\)`)
	endLine   = regexp.MustCompile(`^    ([0-9a-f]{8}) <End of list>`)
)

// readelfLists are the lists readelf --debug-dump=loc prints, by offset.
func readelfLists(t *testing.T, path string) map[int64][][2]uint64 {
	out, err := exec.Command("readelf", "--wide", "--debug-dump=loc", path).Output()
	if err != nil {
		testutil.Skipf(t, "readelf: %v", err)
	}
	lists := map[int64][][2]uint64{}
	start := int64(-1)
	var cur [][2]uint64
	begin := func(off string) {
		if start < 0 {
			start, _ = strconv.ParseInt(off, 16, 64)
		}
	}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		line := sc.Text()
		if m := viewLine.FindStringSubmatch(line); m != nil {
			if m[2] != "location view pair" {
				begin(m[1])
			}
			continue
		}
		if m := baseLine.FindStringSubmatch(line); m != nil {
			begin(m[1])
			continue
		}
		if m := endLine.FindStringSubmatch(line); m != nil {
			begin(m[1])
			lists[start] = cur
			start, cur = -1, nil
			continue
		}
		if m := entryLine.FindStringSubmatch(line); m != nil {
			if m[1] != "" {
				begin(m[1])
			}
			lo, _ := strconv.ParseUint(m[2], 16, 64)
			hi, _ := strconv.ParseUint(m[3], 16, 64)
			cur = append(cur, [2]uint64{lo, hi})
		}
	}
	return lists
}

// dwarfdumpLists are the lists llvm-dwarfdump --debug-info prints in
// the DIEs that name them, by offset, their addresses resolved.
func dwarfdumpLists(t *testing.T, path string) map[int64][][2]uint64 {
	out, err := exec.Command("llvm-dwarfdump", "--debug-info", path).Output()
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump: %v", err)
	}
	head := regexp.MustCompile(`loclist = 0x([0-9a-f]+):\s*$`)
	entry := regexp.MustCompile(`^\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\):`)
	lists := map[int64][][2]uint64{}
	off := int64(-1)
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil {
			off, _ = strconv.ParseInt(m[1], 16, 64)
			lists[off] = [][2]uint64{}
			continue
		}
		if m := entry.FindStringSubmatch(line); m != nil && off >= 0 {
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			lists[off] = append(lists[off], [2]uint64{lo, hi})
			continue
		}
		off = -1
	}
	return lists
}

// compareLists reads the lists path's DIEs name and compares them with
// readelf's.
func compareLists(t *testing.T, path string, want map[int64][][2]uint64) (lists, entries int) {
	ef, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := dwarftest.Data(ef)
	if err != nil {
		t.Fatal(err)
	}
	sec := func(name string) []byte {
		if b := ef.DWARFSection(name); b != nil {
			return b
		}
		l, err := ef.LazySection(name)
		if err != nil {
			return nil
		}
		b, err := l.All()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	loc, lists5, addr := sec(".debug_loc"), sec(".debug_loclists"), sec(".debug_addr")
	seen := map[int64]bool{}
	var base uint64
	var addrBase, listsBase int64
	var version5 bool
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			base, _ = e.Val(dwarf.AttrLowpc).(uint64)
			addrBase, _ = e.Val(dwarf.AttrAddrBase).(int64)
			listsBase, _ = e.Val(dwarf.AttrLoclistsBase).(int64)
			version5 = lists5 != nil && (loc == nil || e.Val(dwarf.AttrLoclistsBase) != nil || unitVersion(t, ef, e.Offset) == 5)
		}
		for _, f := range e.Field {
			off, ok := f.Val.(int64)
			if i, indexed := f.Val.(uint64); indexed && f.Class == dwarf.ClassLocList {
				if off, ok = loclist.Index(lists5, listsBase, i, ef.ByteOrder); !ok {
					t.Fatalf("list %d (%s of the DIE at %#x): no offset in the unit's table at %#x", i, f.Attr, e.Offset, listsBase)
				}
			} else if f.Class != dwarf.ClassLocListPtr || f.Attr == dwarf.AttrLoclistsBase {
				ok = false
			}
			if !ok || seen[off] {
				continue
			}
			seen[off] = true
			var got []loclist.Entry
			if version5 {
				got = loclist.Dwarf5(lists5, off, base, 8, ef.ByteOrder, func(i uint64) (uint64, bool) {
					o := uint64(addrBase) + 8*i
					if o+8 > uint64(len(addr)) {
						return 0, false
					}
					return ef.ByteOrder.Uint64(addr[o:]), true
				})
			} else {
				got = loclist.Dwarf4(loc, off, base, 8, ef.ByteOrder)
			}
			w, ok := want[off]
			if !ok {
				t.Fatalf("list at %#x (%s of the DIE at %#x): readelf prints none there", off, f.Attr, e.Offset)
			}
			if len(got) != len(w) {
				t.Fatalf("list at %#x: %d entries, readelf %d: %v, want %#x", off, len(got), len(w), got, w)
			}
			for i := range w {
				if got[i].Lo != w[i][0] || got[i].Hi != w[i][1] || len(got[i].Expr) == 0 {
					t.Fatalf("list at %#x: entry %d [%#x, %#x) of %d bytes, readelf [%#x, %#x)", off, i, got[i].Lo, got[i].Hi, len(got[i].Expr), w[i][0], w[i][1])
				}
			}
			lists++
			entries += len(w)
		}
	}
	return lists, entries
}

// unitVersion is the version in the header of the unit whose entry is at
// off (32-bit DWARF: 12 bytes before it in DWARF 5, 11 before).
func unitVersion(t *testing.T, ef *elfx.File, off dwarf.Offset) int {
	info := ef.DWARFSection(".debug_info")
	if o := int(off) - 12; o >= 0 && ef.ByteOrder.Uint16(info[o+4:]) == 5 {
		return 5
	}
	return 4
}

package line_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/testutil"
)

// readelfRow is a row of readelf --debug-dump=decodedline: its line
// ("-" at a sequence's end), address ("0" for 0) and view (empty for 0).
var readelfRow = regexp.MustCompile(`^\S+\s+(\d+|-)\s+(?:0x)?([0-9a-f]+)\s*(\d*)`)

// TestViews: each row's view number (GCC's location views) is the one
// readelf prints, for every row of every program of GCC -O2 programs.
func TestViews(t *testing.T) {
	for _, path := range []string{testutil.Fixture(t, "cpp-real").Path, testutil.RealBinary(t, "libstdc++")} {
		out, err := exec.Command("readelf", "--wide", "--debug-dump=decodedline", path).Output()
		if err != nil {
			testutil.Skipf(t, "readelf: %v", err)
		}
		var want [][2]uint64 // address, view
		sc := bufio.NewScanner(bytes.NewReader(out))
		nonzero := 0
		for sc.Scan() {
			m := readelfRow.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			addr, _ := strconv.ParseUint(m[2], 16, 64)
			view, _ := strconv.ParseUint("0"+m[3], 10, 64)
			if view > 0 {
				nonzero++
			}
			want = append(want, [2]uint64{addr, view})
		}
		got := programViews(t, path)
		if len(got) != len(want) || len(want) < 10_000 || nonzero < 1000 {
			t.Fatalf("%s: %d rows, readelf %d (%d of them with a view): want the same, at least 10000 and 1000", path, len(got), len(want), nonzero)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: row %d: address %#x view %d, readelf %#x view %d", path, i, got[i][0], got[i][1], want[i][0], want[i][1])
			}
		}
		t.Logf("%s: %d rows, %d views", path, len(want), nonzero)
	}
}

// programViews is every row's address and view of every line program of
// path, in section order.
func programViews(t *testing.T, path string) [][2]uint64 {
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	sec := func(name string) []byte {
		s := ef.Section(name)
		if s == nil {
			return nil
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := &line.Sections{Line: sec(".debug_line"), Str: sec(".debug_str"), LineStr: sec(".debug_line_str"), Order: binary.LittleEndian}
	var out [][2]uint64
	for off := int64(0); off+4 <= int64(len(s.Line)); off += 4 + int64(binary.LittleEndian.Uint32(s.Line[off:])) {
		p, err := line.New(s, off, &line.Unit{AddrSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		rd := p.Reader()
		var row line.Row
		for {
			if err := rd.Next(&row); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			v := uint64(row.View)
			if row.EndSequence {
				v = 0
			}
			out = append(out, [2]uint64{row.Addr, v})
		}
	}
	return out
}

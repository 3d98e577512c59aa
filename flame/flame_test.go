package flame

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

func frames(names ...string) []Frame {
	var fs []Frame
	for _, n := range names {
		fs = append(fs, Frame{Name: n, Module: "app", Lang: types.LangGo})
	}
	return fs
}

// sample is 80 samples of main;outer;inner, 20 of main;other, and one
// kernel and one inlined frame.
func sample() []Stack {
	k := append(frames("main", "other"), Frame{Name: "do_syscall_64", Module: "[kernel]", Kernel: true})
	in := append(frames("main", "outer", "inner"), Frame{Name: "helper", Module: "app", Inlined: true})
	return []Stack{
		{Frames: frames("main", "outer", "inner"), Count: 70},
		{Frames: in, Count: 10},
		{Frames: frames("main", "other"), Count: 15},
		{Frames: k, Count: 5},
	}
}

func TestFoldedRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFolded(&b, append(sample(), Stack{Frames: frames("main", "outer", "inner"), Count: 1})); err != nil {
		t.Fatal(err)
	}
	want := "main;other 15\nmain;other;do_syscall_64_[k] 5\nmain;outer;inner 71\nmain;outer;inner;helper_[i] 10\n"
	if b.String() != want {
		t.Fatalf("folded:\n%s\nwant:\n%s", b.String(), want)
	}
	got, err := ReadFolded(strings.NewReader(b.String() + "main;other 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	WriteFolded(&b2, got)
	if want2 := strings.Replace(want, "main;other 15", "main;other 16", 1); b2.String() != want2 {
		t.Errorf("read back:\n%s\nwant:\n%s", b2.String(), want2)
	}
	if !got[1].Frames[2].Kernel || !got[3].Frames[3].Inlined {
		t.Errorf("annotations lost: %+v", got)
	}
	if _, err := ReadFolded(strings.NewReader("main;x notanumber\n")); err == nil {
		t.Error("a bad count is accepted")
	}
}

func TestFoldedSemicolon(t *testing.T) {
	var b bytes.Buffer
	WriteFolded(&b, []Stack{{Frames: frames("a;b", "c"), Count: 2}})
	if b.String() != "a:b;c 2\n" {
		t.Errorf("got %q", b.String())
	}
}

// svgFrame is a <g> of the SVG: its title and rect.
type svgFrame struct {
	Title string `xml:"title"`
	Rect  struct {
		X     float64 `xml:"x,attr"`
		Y     float64 `xml:"y,attr"`
		Width float64 `xml:"width,attr"`
	} `xml:"rect"`
	Text string `xml:"text"`
}

func parseSVG(t *testing.T, b []byte) map[string]svgFrame {
	t.Helper()
	var doc struct {
		Groups []struct {
			ID     string     `xml:"id,attr"`
			Frames []svgFrame `xml:"g"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the SVG is not XML: %v", err)
	}
	out := map[string]svgFrame{}
	for _, g := range doc.Groups {
		for _, f := range g.Frames {
			name := f.Title[:strings.LastIndex(f.Title, ": ")]
			out[name] = f
		}
	}
	return out
}

// TestSVGGeometry: widths are proportional to samples (inner is 80% of
// main), children lie within their parent, one row up.
func TestSVGGeometry(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, sample(), &SVGOptions{Title: "t", Width: 1000}); err != nil {
		t.Fatal(err)
	}
	fs := parseSVG(t, b.Bytes())
	main, outer, inner, other := fs["main [app]"], fs["outer [app]"], fs["inner [app]"], fs["other [app]"]
	if math.Abs(inner.Rect.Width-0.8*main.Rect.Width) > 1 {
		t.Errorf("inner %.1f px, main %.1f px: want 80%%", inner.Rect.Width, main.Rect.Width)
	}
	for _, c := range []struct {
		name          string
		parent, child svgFrame
	}{{"outer in main", main, outer}, {"inner in outer", outer, inner}, {"other in main", main, other}} {
		p, k := c.parent.Rect, c.child.Rect
		if k.X < p.X-0.05 || k.X+k.Width > p.X+p.Width+0.05 || k.Y != p.Y-frameHeight {
			t.Errorf("%s: child %+v, parent %+v", c.name, k, p)
		}
	}
	if _, ok := fs["do_syscall_64 [[kernel]]"]; !ok {
		t.Errorf("the kernel frame is missing: %v", fs)
	}
	if _, ok := fs["helper [app] (inlined)"]; !ok {
		t.Errorf("the inlined frame is missing: %v", fs)
	}
}

// TestSVGEscape: names with <, >, & and quotes (C++ and Rust generics)
// stay XML, and read back as they were.
func TestSVGEscape(t *testing.T) {
	name := `std::map<int, std::string>::operator[]<"k" & 'v'>`
	var b bytes.Buffer
	if err := WriteSVG(&b, []Stack{{Frames: []Frame{{Name: name, Module: "a&b", Lang: types.LangCPlusPlus}}, Count: 3}}, &SVGOptions{Title: "<t>"}); err != nil {
		t.Fatal(err)
	}
	fs := parseSVG(t, b.Bytes())
	if _, ok := fs[name+" [a&b]"]; !ok {
		t.Errorf("%q not found in %v", name, fs)
	}
}

func TestSVGGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, sample(), &SVGOptions{Title: "golden", Width: 600}); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	WriteSVG(&again, sample(), &SVGOptions{Title: "golden", Width: 600})
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Fatal("two runs differ")
	}
	testutil.Golden(t, filepath.Join("testdata", "sample.svg"), b.Bytes())
}

// TestTop: self counts the innermost frame, total counts a function once
// per stack, recursion included.
func TestTop(t *testing.T) {
	stacks := append(sample(), Stack{Frames: frames("main", "rec", "rec", "rec"), Count: 7})
	got := Top(stacks, 3)
	want := []TopRow{
		{Name: "inner", Module: "app", Self: 70, Total: 80},
		{Name: "other", Module: "app", Self: 15, Total: 20},
		{Name: "helper", Module: "app", Self: 10, Total: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top:\n%+v\nwant\n%+v", got, want)
	}
	for _, r := range Top(stacks, -1) {
		if r.Name == "rec" && (r.Self != 7 || r.Total != 7) {
			t.Errorf("rec: %+v, want self 7, total 7", r)
		}
		if r.Name == "main" && r.Total != 107 {
			t.Errorf("main: total %d, want 107", r.Total)
		}
	}
	var b bytes.Buffer
	WriteTop(&b, got, 107)
	if !strings.Contains(b.String(), " 65.42%        70  74.77%        80  inner [app]") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestManyStacks: 100,000 distinct stacks make a graph (the width cut
// keeps it small).
func TestManyStacks(t *testing.T) {
	var stacks []Stack
	for i := 0; i < 100000; i++ {
		stacks = append(stacks, Stack{Frames: frames("main", "f"+strconv.Itoa(i%1000), "g"+strconv.Itoa(i)), Count: uint64(1 + i%7)})
	}
	n := &countWriter{}
	if err := WriteSVG(n, stacks, nil); err != nil {
		t.Fatal(err)
	}
	if n.n == 0 || n.n > 50<<20 {
		t.Errorf("%d bytes", n.n)
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(b []byte) (int, error) { c.n += len(b); return len(b), nil }

var _ io.Writer = (*countWriter)(nil)

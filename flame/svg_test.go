package flame

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

// svgDoc is what the tests read back from WriteSVG's output.
type svgDoc struct {
	XMLName xml.Name   `xml:"svg"`
	Width   float64    `xml:"width,attr"`
	Height  float64    `xml:"height,attr"`
	Texts   []svgText  `xml:"text"`
	Groups  []svgGroup `xml:"g"`
	Script  string     `xml:"script"`
}

type svgText struct {
	ID   string `xml:"id,attr"`
	Text string `xml:",chardata"`
}

type svgGroup struct {
	ID     string     `xml:"id,attr"`
	Total  uint64     `xml:"data-total,attr"`
	Frames []svgFrame `xml:"g"`
	Texts  []string   `xml:"text"`
}

type svgFrame struct {
	Start uint64 `xml:"data-s,attr"`
	Count uint64 `xml:"data-n,attr"`
	Title string `xml:"title"`
	Rect  struct {
		X      float64 `xml:"x,attr"`
		Y      float64 `xml:"y,attr"`
		Width  float64 `xml:"width,attr"`
		Height float64 `xml:"height,attr"`
		Fill   string  `xml:"fill,attr"`
	} `xml:"rect"`
	Label string `xml:"text"`
}

func (f *svgFrame) name() string { n, _, _ := strings.Cut(f.Title, "\n"); return n }

// render writes stacks as SVG, parses it back and returns the frames.
func render(t *testing.T, stacks []stack.Stack, opts *SVGOptions) ([]byte, *svgDoc, []svgFrame) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSVG(&b, stacks, opts); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the SVG does not parse: %v", err)
	}
	for _, g := range doc.Groups {
		if g.ID == "frames" {
			return b.Bytes(), &doc, g.Frames
		}
	}
	t.Fatal("no #frames group")
	return nil, nil, nil
}

func find(t *testing.T, frames []svgFrame, name string) *svgFrame {
	t.Helper()
	for i := range frames {
		if frames[i].name() == name {
			return &frames[i]
		}
	}
	t.Fatalf("no frame %q", name)
	return nil
}

// checkNesting checks that every frame's callees lie inside it, in pixels
// and in samples, without overlapping, and that the frames say the samples
// the stacks had.
func checkNesting(t *testing.T, frames []svgFrame, total uint64) {
	t.Helper()
	const eps = 0.011 // two decimals, each end rounded
	if len(frames) == 0 || frames[0].name() != "all" || frames[0].Count != total {
		t.Fatalf("the first frame is not all %d samples: %+v", total, frames[:min(1, len(frames))])
	}
	base := frames[0].Rect.Y
	last := map[float64]*svgFrame{} // by depth, the frame seen last
	for i := range frames {
		c := &frames[i]
		if c.Rect.Width <= 0 || c.Rect.Height != rowHeight-1 {
			t.Errorf("%s: rect %+v", c.name(), c.Rect)
		}
		depth := (base - c.Rect.Y) / rowHeight
		if depth != math.Trunc(depth) || depth < 0 || (depth == 0) != (i == 0) {
			t.Fatalf("%s at y %g, the root at %g", c.name(), c.Rect.Y, base)
		}
		last[depth] = c
		if i == 0 {
			continue
		}
		// Frames come depth-first: the caller is the last frame one row down.
		parent := last[depth-1]
		if parent == nil {
			t.Errorf("%s at y %g: no caller below it", c.name(), c.Rect.Y)
			continue
		}
		if c.Start < parent.Start || c.Start+c.Count > parent.Start+parent.Count {
			t.Errorf("%s samples [%d,+%d) outside its caller %s [%d,+%d)", c.name(), c.Start, c.Count, parent.name(), parent.Start, parent.Count)
		}
		if c.Rect.X < parent.Rect.X-eps || c.Rect.X+c.Rect.Width > parent.Rect.X+parent.Rect.Width+eps {
			t.Errorf("%s pixels [%g,+%g) outside its caller %s [%g,+%g)", c.name(), c.Rect.X, c.Rect.Width, parent.name(), parent.Rect.X, parent.Rect.Width)
		}
		if math.Abs(c.Rect.Width-parent.Rect.Width*float64(c.Count)/float64(parent.Count)) > eps {
			t.Errorf("%s is %g px for %d samples, its caller %g px for %d", c.name(), c.Rect.Width, c.Count, parent.Rect.Width, parent.Count)
		}
	}
	// Siblings (same y) never overlap.
	byY := map[float64][]svgFrame{}
	for _, f := range frames {
		byY[f.Rect.Y] = append(byY[f.Rect.Y], f)
	}
	for _, row := range byY {
		for i := 1; i < len(row); i++ {
			if row[i].Start < row[i-1].Start+row[i-1].Count || row[i].Rect.X < row[i-1].Rect.X+row[i-1].Rect.Width-eps {
				t.Errorf("%s overlaps %s", row[i].name(), row[i-1].name())
			}
		}
	}
}

func TestSVGWidths(t *testing.T) {
	stacks := []stack.Stack{
		{Frames: goFrames("main", "outer", "inner"), Count: 80},
		{Frames: goFrames("main", "other"), Count: 20},
	}
	_, doc, frames := render(t, stacks, &SVGOptions{Width: 1000})
	if doc.Width != 1000 {
		t.Errorf("width %g", doc.Width)
	}
	checkNesting(t, frames, 100)
	main, inner, other := find(t, frames, "main"), find(t, frames, "inner"), find(t, frames, "other")
	if main.Rect.Width != 1000-2*padX {
		t.Errorf("main is %g px wide, want the whole %d", main.Rect.Width, 1000-2*padX)
	}
	if got := inner.Rect.Width / main.Rect.Width; math.Abs(inner.Rect.Width-0.8*main.Rect.Width) > 1 {
		t.Errorf("inner is %.3f of main, want 0.8", got)
	}
	if math.Abs(other.Rect.Width-0.2*main.Rect.Width) > 1 {
		t.Errorf("other is %g px of %g", other.Rect.Width, main.Rect.Width)
	}
	// Siblings in name order: other left of outer.
	if outer := find(t, frames, "outer"); other.Rect.X >= outer.Rect.X || other.Rect.X != main.Rect.X {
		t.Errorf("outer at %g, other at %g, main at %g", outer.Rect.X, other.Rect.X, main.Rect.X)
	}
	// Callees above callers.
	if !(inner.Rect.Y < find(t, frames, "outer").Rect.Y && main.Rect.Y < frames[0].Rect.Y) {
		t.Error("the graph is not drawn root at the bottom")
	}
	if want := "inner\napp, Go, 80 samples, 80.00%"; inner.Title != want {
		t.Errorf("title %q, want %q", inner.Title, want)
	}
	if inner.Label != "inner" || frames[0].Label != "all" {
		t.Errorf("labels %q %q", inner.Label, frames[0].Label)
	}
}

// TestSVGMerge checks that the same frames merge along the path whatever
// the order and duplication of the stacks, and that the bytes depend only
// on the samples.
func TestSVGMerge(t *testing.T) {
	stacks := small()
	want, _, frames := render(t, stacks, nil)
	checkNesting(t, frames, 100)
	counts := map[string]uint64{}
	for _, f := range frames {
		counts[f.name()] += f.Count
	}
	if counts["main.main"] != 100 || counts["main.outer"] != 80 || counts["main.inner"] != 80 ||
		counts["main.other"] != 20 || counts["main.helper"] != 10 || counts["write"] != 5 {
		t.Errorf("merged counts %v", counts)
	}
	if len(frames) != 12 {
		t.Errorf("%d frames, want 12 (all and 11 distinct paths)", len(frames))
	}
	// Split counts into duplicate stacks, shuffle: same bytes.
	var split []stack.Stack
	for _, s := range stacks {
		split = append(split, stack.Stack{Frames: slices.Clone(s.Frames), Count: s.Count - 1}, stack.Stack{Frames: s.Frames, Count: 1})
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(split), func(i, j int) { split[i], split[j] = split[j], split[i] })
	got, _, _ := render(t, split, nil)
	if !bytes.Equal(got, want) {
		t.Error("shuffled, duplicated stacks give another SVG")
	}
}

func TestSVGGolden(t *testing.T) {
	opts := &SVGOptions{Title: `small <profile> & "friends"`, Width: 800}
	out, doc, frames := render(t, small(), opts)
	again, _, _ := render(t, small(), opts)
	if !bytes.Equal(out, again) {
		t.Fatal("two renderings differ")
	}
	testutil.Golden(t, "flame/testdata/small.svg", out)
	checkNesting(t, frames, 100)
	texts := map[string]string{}
	for _, x := range doc.Texts {
		texts[x.ID] = x.Text
	}
	if texts["title"] != opts.Title || texts["search"] != "Search" || texts["unzoom"] != "Reset zoom" {
		t.Errorf("header texts %q", texts)
	}
	if !strings.Contains(doc.Script, "addEventListener") || strings.Contains(script, "]]>") {
		t.Error("no script, or a script that ends its CDATA")
	}
	for _, g := range doc.Groups {
		if g.ID == "legend" && !slices.Equal(g.Texts, []string{"Go", "Rust", "C", "C++", "kernel", "unknown"}) {
			t.Errorf("legend %q", g.Texts)
		}
	}
	// Self-contained: the namespace is the only address, nothing is linked.
	if bytes.Count(out, []byte("http")) != 1 || bytes.Contains(out, []byte("href")) || bytes.Contains(out, []byte("url(")) || bytes.Contains(out, []byte("@import")) {
		t.Error("the SVG refers to something outside it")
	}
}

func TestSVGEscapes(t *testing.T) {
	odd := "bad\x00utf8\xff<&>\"'\tend"
	stacks := []stack.Stack{
		{Frames: []stack.Frame{{Name: "main", Lang: types.LangCPlusPlus}, {Name: cxxName, Module: "lib<x>&.so", Lang: types.LangCPlusPlus}}, Count: 3},
		{Frames: []stack.Frame{{Name: "main", Lang: types.LangCPlusPlus}, {Name: odd}}, Count: 1},
	}
	out, _, frames := render(t, stacks, &SVGOptions{Title: "<script>alert(1)</script>", Width: 3000})
	if bytes.Contains(out, []byte("<script>alert")) || bytes.Contains(out, []byte("<std::")) {
		t.Error("markup in names or title left unescaped")
	}
	f := find(t, frames, cxxName)
	if want := cxxName + "\nlib<x>&.so, C++, 3 samples, 75.00%"; f.Title != want {
		t.Errorf("title %q, want %q", f.Title, want)
	}
	if f.Label != cxxName { // 3000 px is room enough
		t.Errorf("label %q", f.Label)
	}
	want := "bad\uFFFDutf8\uFFFD<&>\"' end" // the tab is a space in every printer
	find(t, frames, want)

	// Narrow: the label is cut, still valid text.
	_, _, frames = render(t, stacks, &SVGOptions{Width: 300})
	f = find(t, frames, cxxName)
	if !strings.HasSuffix(f.Label, "..") || !strings.HasPrefix(cxxName, strings.TrimSuffix(f.Label, "..")) ||
		float64(len(f.Label))*charWidth > f.Rect.Width {
		t.Errorf("label %q does not fit %g px", f.Label, f.Rect.Width)
	}
}

func TestSVGMinWidth(t *testing.T) {
	stacks := []stack.Stack{
		{Frames: goFrames("main", "big"), Count: 100000},
		{Frames: goFrames("main", "tiny", "tinier"), Count: 1}, // 0.0118 px of 1180
		{Frames: goFrames("main", "deep", "deeper", "deepest"), Count: 10},
	}
	_, doc, frames := render(t, stacks, nil)
	names := map[string]bool{}
	for _, f := range frames {
		names[f.name()] = true
	}
	if names["tiny"] || names["tinier"] || !names["deepest"] {
		t.Errorf("frames %v: want tiny ones omitted, 0.1 px kept", names)
	}
	_, _, frames = render(t, stacks, &SVGOptions{MinWidth: 0.5})
	for _, f := range frames {
		if f.Rect.Width < 0.5 {
			t.Errorf("%s is %g px wide", f.name(), f.Rect.Width)
		}
	}
	// The height leaves no room for omitted depths.
	if want := float64(headHeight + 5*rowHeight + footHeight); doc.Height != want { // all, main, deep, deeper, deepest
		t.Errorf("height %g, want %g", doc.Height, want)
	}
}

func TestSVGEmpty(t *testing.T) {
	for _, stacks := range [][]stack.Stack{nil, {{Count: 0, Frames: goFrames("main")}}} {
		_, doc, frames := render(t, stacks, nil)
		if len(frames) != 0 {
			t.Errorf("frames %v", frames)
		}
		found := false
		for _, x := range doc.Texts {
			found = found || x.Text == "No samples"
		}
		if !found {
			t.Error("an empty graph does not say so")
		}
	}
	// Samples without frames widen the root only.
	_, _, frames := render(t, []stack.Stack{{Count: 1}, {Frames: goFrames("main"), Count: 3}}, nil)
	if frames[0].Count != 4 || frames[1].Count != 3 || frames[1].Start != 0 {
		t.Errorf("frames %+v", frames)
	}
}

// hue is a "#rrggbb" colour's hue in degrees.
func hue(t *testing.T, c string) float64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(c, "#"), 16, 32)
	if err != nil || len(c) != 7 {
		t.Fatalf("colour %q", c)
	}
	r, g, b := float64(v>>16)/255, float64(v>>8&255)/255, float64(v&255)/255
	hi, lo := max(r, g, b), min(r, g, b)
	var h float64
	switch {
	case hi == lo:
		return 0
	case hi == r:
		h = math.Mod((g-b)/(hi-lo), 6)
	case hi == g:
		h = (b-r)/(hi-lo) + 2
	default:
		h = (r-g)/(hi-lo) + 4
	}
	return math.Mod(60*h+360, 360)
}

func TestColors(t *testing.T) {
	inFamily := func(h float64, p palette) bool {
		d := math.Mod(h-p.Hue+1+360, 360) // 1° either side: 8 bits per channel round
		return d <= p.HueSpan+2
	}
	families := map[string]palette{"kernel": kernelPalette}
	for l, p := range langPalettes {
		families[l.String()] = p
	}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("pkg.Func%d", i)
		for l, p := range langPalettes {
			f := stack.Frame{Name: name, Lang: l, Module: "app"}
			c := frameColor(&f, false)
			if !inFamily(hue(t, c), p) {
				t.Fatalf("%s in %s is %s, hue %.0f, outside its family %+v", name, l, c, hue(t, c), p)
			}
			for other, q := range families {
				if other != l.String() && inFamily(hue(t, c), q) && q.Sat > 20 {
					t.Fatalf("%s in %s is %s, in %s's family too", name, l, c, other)
				}
			}
			if frameColor(&f, false) != c {
				t.Fatal("colours are not deterministic")
			}
		}
		k := stack.Frame{Name: name, Module: "[kernel]", Kernel: true, Lang: types.LangC}
		if c := frameColor(&k, false); !inFamily(hue(t, c), kernelPalette) {
			t.Fatalf("kernel frame %s is %s", name, c)
		}
	}
	// Shades differ between functions of one language.
	a, b := stack.Frame{Name: "main.a", Lang: types.LangGo}, stack.Frame{Name: "main.b", Lang: types.LangGo}
	if frameColor(&a, false) == frameColor(&b, false) {
		t.Error("two functions, one colour")
	}
	// By module: one hue per module whatever the language.
	x := stack.Frame{Name: "f", Module: "libx.so", Lang: types.LangRust}
	y := stack.Frame{Name: "g", Module: "libx.so", Lang: types.LangC}
	z := stack.Frame{Name: "f", Module: "liby.so", Lang: types.LangRust}
	if hx, hy := hue(t, frameColor(&x, true)), hue(t, frameColor(&y, true)); math.Abs(hx-hy) > 1.5 {
		t.Errorf("one module, hues %g and %g", hx, hy)
	}
	if frameColor(&x, true) == frameColor(&z, true) || frameColor(&x, true) == frameColor(&x, false) {
		t.Error("colouring by module changes nothing")
	}
	_, _, frames := render(t, small(), &SVGOptions{ColorBy: "module"})
	if find(t, frames, "write").Rect.Fill == find(t, frames, "main.other").Rect.Fill {
		t.Error("libc and app frames share a colour")
	}
	if hsl(0, 100, 50) != "#ff0000" || hsl(120, 100, 25) != "#008000" || hsl(240, 0, 100) != "#ffffff" {
		t.Error("hsl conversion")
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width float64
		want  string
	}{
		{"main.inner", 200, "main.inner"},
		{"main.inner", 6 + 10*charWidth, "main.inner"},
		{"main.inner", 6 + 9*charWidth, "main.in.."},
		{"main.inner", 6 + 3*charWidth, "m.."},
		{"main.inner", 6 + 2.9*charWidth, ""},
		{"ünïcödé_fn", 6 + 5*charWidth, "ünï.."},
	} {
		if got := label(tc.name, tc.width); got != tc.want {
			t.Errorf("label(%q, %g) = %q, want %q", tc.name, tc.width, got, tc.want)
		}
	}
}

// synthetic is n distinct stacks 8 to 40 frames deep, drawn from a few
// hundred functions in several languages, as a busy program's profile,
// each with 1 to 1000 samples.
func synthetic(n int) []stack.Stack { return syntheticSkew(n, false) }

// syntheticSkew is synthetic with, if skewed, samples falling off as
// 1/rank, as real profiles' do: far more frames are wide enough to draw.
func syntheticSkew(n int, skewed bool) []stack.Stack {
	r := rand.New(rand.NewPCG(7, 11))
	langs := []types.Lang{types.LangGo, types.LangRust, types.LangC, types.LangCPlusPlus, types.LangZig}
	fns := make([]stack.Frame, 400)
	for i := range fns {
		fns[i] = stack.Frame{Name: fmt.Sprintf("pkg%d.Function%d[go.shape.int]", i%17, i), Module: fmt.Sprintf("mod%d.so", i%5), Lang: langs[i%5]}
	}
	seen := map[string]bool{}
	var out []stack.Stack
	for len(out) < n {
		depth := 8 + r.IntN(33)
		fs := make([]stack.Frame, depth)
		key := make([]byte, 0, 2*depth)
		for d := range fs {
			// Narrow near the root, wide at the leaves.
			k := r.IntN(min(3+d*d, len(fns)))
			fs[d] = fns[k]
			key = strconv.AppendInt(key, int64(k), 36)
			key = append(key, ';')
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		c := 1 + uint64(r.IntN(1000))
		if skewed {
			c = 1 + uint64(1e7/float64(1+r.IntN(n)))
		}
		out = append(out, stack.Stack{Frames: fs, Count: c})
	}
	return out
}

func TestSVGLarge(t *testing.T) {
	stacks := synthetic(20000)
	var total uint64
	for _, s := range stacks {
		total += s.Count
	}
	_, _, frames := render(t, stacks, nil)
	checkNesting(t, frames, total)
}

func BenchmarkWriteSVG100k(b *testing.B) {
	for _, skewed := range []bool{false, true} {
		b.Run(fmt.Sprintf("skewed=%v", skewed), func(b *testing.B) {
			stacks := syntheticSkew(100000, skewed)
			var w countingWriter
			for b.Loop() {
				w = 0
				if err := WriteSVG(&w, stacks, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(w)/1e6, "MB_svg")
		})
	}
}

type countingWriter int

func (w *countingWriter) Write(b []byte) (int, error) {
	*w += countingWriter(len(b))
	return len(b), nil
}

func BenchmarkWriteFolded100k(b *testing.B) {
	stacks := synthetic(100000)
	for b.Loop() {
		WriteFolded(io.Discard, stacks)
	}
}

func BenchmarkTop100k(b *testing.B) {
	stacks := synthetic(100000)
	for b.Loop() {
		Top(stacks, 20)
	}
}

func BenchmarkReadFolded100k(b *testing.B) {
	var buf bytes.Buffer
	if err := WriteFolded(&buf, synthetic(100000)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ReadFolded(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/1e6, "MB_folded")
}

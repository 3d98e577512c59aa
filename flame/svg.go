package flame

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/binscope/binscope/types"
)

// SVGOptions tune WriteSVG. A nil *SVGOptions means the defaults.
type SVGOptions struct {
	Title string
	// Width is the image's width in pixels (default 1200).
	Width int
	// ColorBy is "lang" (the default: a hue family per language, the
	// kernel its own) or "module" (a hue per file).
	ColorBy string
	// MinWidth omits frames narrower than this many pixels (default 0.1).
	MinWidth float64
}

// node is a frame of the merged tree: the usual flame graph merge, where
// frames with the same name under the same parent are one.
type node struct {
	f        Frame
	count    uint64
	kids     map[string]*node
	sorted   []*node
	offset   uint64 // samples left of this frame
	depth    int
	maxDepth int
}

func (n *node) child(f Frame) *node {
	k := f.Name
	if f.Kernel {
		k += kernelSuffix
	} else if f.Inlined {
		k += inlineSuffix
	}
	c := n.kids[k]
	if c == nil {
		c = &node{f: f, kids: map[string]*node{}, depth: n.depth + 1}
		n.kids[k] = c
	}
	return c
}

// Layout constants, in pixels.
const (
	frameHeight = 16
	padX        = 10
	headHeight  = 48
	footHeight  = 28
	charWidth   = 6.6 // of the 12px monospace-ish label font
)

// WriteSVG writes a self-contained interactive flame graph of stacks:
// the root at the bottom, each frame as wide as its samples, children in
// name order. Clicking a frame zooms into it (its ancestors stay, dimmed;
// "Reset zoom" goes back), "Search" highlights the frames whose names
// match a regular expression and shows their share of the samples, and
// pointing at a frame shows its name, module and samples at the bottom.
func WriteSVG(w io.Writer, stacks []Stack, opts *SVGOptions) error {
	var o SVGOptions
	if opts != nil {
		o = *opts
	}
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.1
	}
	if o.ColorBy == "" {
		o.ColorBy = "lang"
	}
	if o.Title == "" {
		o.Title = "Flame graph"
	}
	root := &node{f: Frame{Name: "all"}, kids: map[string]*node{}}
	for _, s := range stacks {
		if s.Count == 0 {
			continue
		}
		root.count += s.Count
		n := root
		for _, f := range s.Frames {
			n = n.child(f)
			n.count += s.Count
		}
	}
	// Offsets and depths, iteratively (stacks can be deep).
	work := []*node{root}
	maxDepth := 0
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		maxDepth = max(maxDepth, n.depth)
		n.sorted = make([]*node, 0, len(n.kids))
		for _, c := range n.kids {
			n.sorted = append(n.sorted, c)
		}
		sort.Slice(n.sorted, func(i, j int) bool { return n.sorted[i].f.Name < n.sorted[j].f.Name })
		off := n.offset
		for _, c := range n.sorted {
			c.offset = off
			off += c.count
			work = append(work, c)
		}
	}
	height := headHeight + (maxDepth+1)*frameHeight + footHeight
	span := float64(o.Width - 2*padX)
	total := max(root.count, 1)
	scale := span / float64(total)

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" onload="init(evt)">
<style>
text { font-family: monospace; font-size: 12px; fill: #000; }
.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }
#title { font-size: 17px; text-anchor: middle; }
.button { fill: #333; cursor: pointer; }
.button:hover { text-decoration: underline; }
</style>
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8"/>
<text id="title" x="%d" y="24">%s</text>
<text id="reset" class="button" x="%d" y="24" style="display:none" onclick="unzoom()">Reset zoom</text>
<text id="search" class="button" x="%d" y="24" text-anchor="end" onclick="search()">Search</text>
<text id="matched" x="%d" y="%d" text-anchor="end"></text>
<text id="details" x="%d" y="%d"> </text>
<g id="frames" data-total="%d" data-width="%g" data-pad="%d">
`, o.Width, height, o.Width, height, o.Width/2, esc(o.Title), padX, o.Width-padX, o.Width-padX, height-10,
		padX, height-10, total, span, padX)

	work = []*node{root}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		wpx := float64(n.count) * scale
		if wpx < o.MinWidth {
			continue // nor its children, narrower still
		}
		x := padX + float64(n.offset)*scale
		y := height - footHeight - (n.depth+1)*frameHeight
		name := n.f.Name
		info := name
		if n.f.Module != "" {
			info += " [" + n.f.Module + "]"
		}
		if n.f.Inlined {
			info += " (inlined)"
		}
		info += fmt.Sprintf(": %d samples, %.2f%%", n.count, 100*float64(n.count)/float64(total))
		fmt.Fprintf(bw, `<g class="f" data-o="%d" data-n="%d" data-d="%d"><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" rx="2" fill="%s"/><text x="%.1f" y="%d">%s</text></g>
`, n.offset, n.count, n.depth, esc(info), x, y, wpx, frameHeight-1, color(n.f, o.ColorBy, n == root), x+3, y+frameHeight-4, esc(label(name, wpx)))
		for i := len(n.sorted) - 1; i >= 0; i-- {
			work = append(work, n.sorted[i])
		}
	}
	bw.WriteString("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n" + script + "]]></script>\n</svg>\n")
	return bw.Flush()
}

// esc escapes text for XML content and attributes.
func esc(s string) string { return html.EscapeString(s) }

// label is name cut to fit wpx pixels, "" when not even two letters fit.
func label(name string, wpx float64) string {
	fit := int((wpx - 6) / charWidth)
	if fit < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= fit {
		return name
	}
	return string(r[:fit-2]) + ".."
}

// hues are each language's family: a base hue and a spread.
var hues = map[types.Lang][2]float64{
	types.LangGo:        {190, 25}, // cyan to blue
	types.LangRust:      {18, 16},  // orange
	types.LangC:         {48, 14},  // yellow
	types.LangCPlusPlus: {90, 20},  // green
	types.LangZig:       {275, 25}, // violet
	types.LangAsm:       {330, 15}, // pink
}

// color is a frame's fill: its family's hue shifted by a hash of its name,
// so a function keeps its colour across graphs.
func color(f Frame, by string, root bool) string {
	if root {
		return "hsl(0,0%,82%)"
	}
	h := fnv.New32a()
	h.Write([]byte(f.Name))
	v := float64(h.Sum32()%1000) / 1000
	if by == "module" {
		m := fnv.New32a()
		m.Write([]byte(f.Module))
		return fmt.Sprintf("hsl(%.0f,%.0f%%,%.0f%%)", float64(m.Sum32()%360), 55+15*v, 60+10*v)
	}
	switch {
	case f.Kernel:
		return fmt.Sprintf("hsl(%.0f,%.0f%%,%.0f%%)", 0+10*v, 65+15*v, 62+8*v) // red
	case f.Lang == types.LangUnknown && !strings.Contains(f.Name, "+0x"):
		return fmt.Sprintf("hsl(0,0%%,%.0f%%)", 65+15*v)
	case f.Lang == types.LangUnknown:
		return "hsl(0,0%,55%)" // an address no symbol names
	}
	fam, ok := hues[f.Lang]
	if !ok {
		fam = [2]float64{0, 0}
	}
	light := 58 + 12*v
	if f.Inlined {
		light += 8
	}
	return fmt.Sprintf("hsl(%.0f,%.0f%%,%.0f%%)", fam[0]+fam[1]*(v-0.5), 60+20*v, light)
}

// script zooms, searches and shows details; frames carry their samples'
// offset (data-o), count (data-n) and depth (data-d).
const script = `
var frames, total, width, pad, zoomed = null, details, matched, reset, searching = null;
function init(evt) {
	var g = document.getElementById("frames");
	frames = g.getElementsByTagName("g");
	total = +g.getAttribute("data-total");
	width = +g.getAttribute("data-width");
	pad = +g.getAttribute("data-pad");
	details = document.getElementById("details");
	matched = document.getElementById("matched");
	reset = document.getElementById("reset");
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i];
		f.addEventListener("click", function (e) { zoom(this); });
		f.addEventListener("mouseover", function (e) { details.textContent = title(this); });
		f.addEventListener("mouseout", function (e) { details.textContent = " "; });
	}
}
function num(f, a) { return +f.getAttribute("data-" + a); }
function title(f) { return f.getElementsByTagName("title")[0].textContent; }
function name(f) { var t = title(f); return t.substring(0, t.lastIndexOf(": ")).replace(/ \[[^\]]*\]( \(inlined\))?$/, ""); }
function place(f, x, w, show, dim) {
	var r = f.getElementsByTagName("rect")[0], t = f.getElementsByTagName("text")[0];
	f.style.display = show ? "" : "none";
	if (!show) return;
	r.setAttribute("x", x.toFixed(1));
	r.setAttribute("width", w.toFixed(1));
	r.style.opacity = dim ? "0.5" : "";
	t.setAttribute("x", (x + 3).toFixed(1));
	var n = name(f), fit = Math.floor((w - 6) / 6.6);
	t.textContent = fit < 3 ? "" : (n.length <= fit ? n : n.substring(0, fit - 2) + "..");
}
function zoom(z) {
	var zo = num(z, "o"), zn = num(z, "n"), zd = num(z, "d");
	zoomed = z;
	reset.style.display = "";
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i], o = num(f, "o"), n = num(f, "n"), d = num(f, "d");
		if (d >= zd && o >= zo && o + n <= zo + zn) {
			place(f, pad + (o - zo) / zn * width, n / zn * width, true, false);
		} else if (d < zd && o <= zo && o + n >= zo + zn) {
			place(f, pad, width, true, true);
		} else {
			place(f, 0, 0, false, false);
		}
	}
	if (searching) search(searching);
}
function unzoom() {
	zoomed = null;
	reset.style.display = "none";
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i];
		place(f, pad + num(f, "o") / total * width, num(f, "n") / total * width, true, false);
	}
	if (searching) search(searching);
}
function search(re) {
	if (re === undefined) {
		if (searching) { searching = null; paint(null); return; }
		re = prompt("Search for a regular expression (empty to clear)", "");
		if (!re) { searching = null; paint(null); return; }
	}
	var rx;
	try { rx = new RegExp(re); } catch (e) { alert(e); return; }
	searching = re;
	paint(rx);
}
function paint(rx) {
	var spans = [];
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i], r = f.getElementsByTagName("rect")[0];
		if (r.getAttribute("data-fill") === null) r.setAttribute("data-fill", r.getAttribute("fill"));
		var hit = rx !== null && rx.test(name(f)) && num(f, "d") > 0;
		r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.getAttribute("data-fill"));
		if (hit) spans.push([num(f, "o"), num(f, "o") + num(f, "n")]);
	}
	document.getElementById("search").textContent = rx ? "Clear search" : "Search";
	if (!rx) { matched.textContent = ""; return; }
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	var sum = 0, end = -1;
	for (var j = 0; j < spans.length; j++) {
		var s = spans[j];
		if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }
		else if (s[1] > end) { sum += s[1] - end; end = s[1]; }
	}
	matched.textContent = "Matched: " + (100 * sum / total).toFixed(1) + "%";
}
`

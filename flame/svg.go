package flame

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/binscope/binscope/stack"
)

// SVGOptions tune WriteSVG; a nil *SVGOptions means every default.
type SVGOptions struct {
	// Title is printed above the graph (default "Flame graph").
	Title string
	// Width is the image's width in pixels (default 1200, at least 200).
	Width int
	// ColorBy is "lang" (the default: a hue family per language, the
	// kernel red, unknown code sand-grey) or "module" (a hue per binary or
	// library). Within its family a function's shade comes from a hash of
	// its name, so it keeps its colour from one graph to the next.
	ColorBy string
	// MinWidth omits frames narrower than this many pixels, and with them
	// their callees (default 0.1). Omitted frames cannot be zoomed into
	// or found by the graph's search.
	MinWidth float64
}

// Geometry, in pixels.
const (
	padX       = 10   // left and right margins
	headHeight = 50   // title, buttons and legend above the frames
	footHeight = 26   // the details line below them
	rowHeight  = 16   // one stack depth; a frame's rect is 1 px less
	fontSize   = 12   // labels, monospace
	charWidth  = 7.25 // of one label character: monospace is 0.6 em, plus slack
	labelInset = 3    // label start, from the frame's left edge
)

// node is one frame of the merged graph: frames with the same name (and
// module, language and kind) under the same parent are one node, as wide
// as their samples together.
type node struct {
	frame *stack.Frame // nil for the root
	depth int          // the root's is 0
	start uint64       // samples left of the frame
	count uint64
}

// merge folds stacks into the flame graph's nodes and returns those keep
// accepts (given a node's samples), sorted by start and then depth: the
// root first, then depth-first with children in name order.
//
// Stacks are sorted lexicographically, so every shared prefix is
// contiguous, and walked with the path of open nodes: each stack closes
// the nodes past its common prefix with the stack before and opens its
// own. A closed node's samples are final and go to its parent, so nodes
// keep does not want are never stored. A stack without frames widens the
// root alone, right of every frame.
func merge(stacks []stack.Stack, keep func(samples uint64) bool) []node {
	sorted := make([]*stack.Stack, 0, len(stacks))
	var empty uint64
	for i := range stacks {
		switch s := &stacks[i]; {
		case s.Count == 0:
		case len(s.Frames) == 0:
			empty += s.Count
		default:
			sorted = append(sorted, s)
		}
	}
	slices.SortFunc(sorted, func(a, b *stack.Stack) int { return compareStacks(a.Frames, b.Frames) })

	var out []node
	open := []node{{}} // open[d] is the node at depth d on the current path
	closeTo := func(depth int) {
		for len(open) > depth+1 {
			n := open[len(open)-1]
			open = open[:len(open)-1]
			open[len(open)-1].count += n.count
			if keep(n.count) {
				out = append(out, n)
			}
		}
	}
	var prev []stack.Frame
	var offset uint64
	for _, s := range sorted {
		p := commonPrefix(prev, s.Frames)
		closeTo(p)
		for d := p; d < len(s.Frames); d++ {
			open = append(open, node{frame: &s.Frames[d], depth: d + 1, start: offset})
		}
		open[len(open)-1].count += s.Count
		offset += s.Count
		prev = s.Frames
	}
	closeTo(0)
	if root := open[0]; root.count+empty > 0 {
		root.count += empty
		out = append(out, root)
	}
	slices.SortFunc(out, func(a, b node) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.depth, b.depth)
	})
	return out
}

// WriteSVG writes stacks as a self-contained interactive flame graph: one
// SVG file with no external resources, for a browser. The root ("all", every
// sample) is at the bottom, each caller below its callees, frames as wide as
// their samples, siblings in name order. Every frame has a tooltip with its
// name, module, language, samples and their percentage of all samples, and a
// label cut to fit. In a browser, clicking a frame zooms into it (its callers
// stay below, dimmed; the root or "Reset zoom" goes back), "Search" (or
// Ctrl-F or /) highlights the frames whose names match a regular expression
// and shows the share of samples under them, pointing at a frame prints its
// details under the graph, and Escape resets both.
//
// Output is deterministic: the same stacks in any order give the same bytes.
func WriteSVG(w io.Writer, stacks []stack.Stack, opts *SVGOptions) error {
	o := svgDefaults(opts)
	var total uint64
	for i := range stacks {
		total += stacks[i].Count
	}
	g := graph{o: o, total: total, span: float64(o.Width - 2*padX), byModule: o.ColorBy == "module"}
	if total > 0 {
		g.scale = g.span / float64(total)
	}
	nodes := merge(stacks, func(samples uint64) bool { return float64(samples)*g.scale >= o.MinWidth })
	g.drawn(nodes)

	b := make([]byte, 0, 40<<10) // written out every 32 KiB
	b = g.appendHead(b)
	root := stack.Frame{Name: "all"}
	for i := range nodes {
		b = g.appendNode(b, &nodes[i], &root)
		if len(b) >= 32<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	b = append(b, "</g>\n<script type=\"text/javascript\"><![CDATA["...)
	b = append(b, script...)
	b = append(b, "]]></script>\n</svg>\n"...)
	_, err := w.Write(b)
	return err
}

// svgDefaults are opts with their defaults filled in.
func svgDefaults(opts *SVGOptions) SVGOptions {
	var o SVGOptions
	if opts != nil {
		o = *opts
	}
	if o.Title == "" {
		o.Title = "Flame graph"
	}
	if o.Width <= 0 {
		o.Width = 1200
	}
	o.Width = max(o.Width, 200)
	if o.MinWidth <= 0 {
		o.MinWidth = 0.1
	}
	return o
}

// graph is a flame graph being drawn: its options, samples and scale,
// and what the frames drawn need of the image (height, legend).
type graph struct {
	o        SVGOptions
	total    uint64
	span     float64 // the width the samples share, in pixels
	scale    float64 // pixels per sample
	byModule bool
	deepest  int
	height   int
	langs    [256]bool // languages drawn, by types.Lang (a uint8)
	kernel   bool      // a kernel frame is drawn
	unknown  bool      // a frame of no known language is drawn
}

// drawn takes the depth and the legend from the frames drawn: only they
// count for the height and the legend.
func (g *graph) drawn(nodes []node) {
	for i := range nodes {
		n := &nodes[i]
		g.deepest = max(g.deepest, n.depth)
		if f := n.frame; f != nil {
			switch framePalette(f) {
			case kernelPalette:
				g.kernel = true
			case unknownPalette:
				g.unknown = true
			default:
				g.langs[f.Lang] = true
			}
		}
	}
	g.height = headHeight + (g.deepest+1)*rowHeight + footHeight
}

// appendHead appends the image's head: its size, style, title, controls,
// legend, and the start of the frames' group.
func (g *graph) appendHead(b []byte) []byte {
	o, height := &g.o, g.height
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="`...)
	b = strconv.AppendInt(b, int64(o.Width), 10)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, int64(height), 10)
	b = append(b, `" viewBox="0 0 `...)
	b = strconv.AppendInt(b, int64(o.Width), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(height), 10)
	b = append(b, `" font-family="monospace" font-size="`...)
	b = strconv.AppendInt(b, fontSize, 10)
	b = append(b, "\">\n<style>\n"+style+"</style>\n"...)
	b = append(b, `<rect width="100%" height="100%" fill="`+background+`"/>`+"\n"...)
	b = appendText(b, "title", float64(o.Width)/2, 24, "middle", o.Title)
	b = appendText(b, "unzoom", padX, 24, "", "Reset zoom")
	b = appendText(b, "search", float64(o.Width-padX), 24, "end", "Search")
	b = appendText(b, "details", padX, float64(height-9), "", "")
	b = appendText(b, "matched", float64(o.Width-padX), float64(height-9), "end", "")
	if !g.byModule {
		b = appendLegend(b, g.langs[:], g.kernel, g.unknown)
	}
	if g.total == 0 {
		b = appendText(b, "empty", float64(o.Width)/2, headHeight+12, "middle", "No samples")
	}
	b = append(b, `<g id="frames" data-total="`...)
	b = strconv.AppendUint(b, g.total, 10)
	b = append(b, `" data-x="`...)
	b = strconv.AppendInt(b, padX, 10)
	b = append(b, `" data-span="`...)
	b = strconv.AppendInt(b, int64(g.span), 10)
	b = append(b, `" data-charw="`...)
	b = appendNum(b, charWidth)
	return append(b, "\">\n"...)
}

// appendNode appends one frame: its group with the samples it spans, its
// title (name and details), its box and its label; root stands for the
// root's frame.
func (g *graph) appendNode(b []byte, n *node, root *stack.Frame) []byte {
	f, fill := n.frame, rootColor
	if f == nil {
		f = root
	} else {
		fill = frameColor(f, g.byModule)
	}
	x := padX + float64(n.start)*g.scale
	wd := float64(n.count) * g.scale
	y := headHeight + (g.deepest-n.depth)*rowHeight
	name := cleanName(f.Name)

	b = append(b, `<g data-s="`...)
	b = strconv.AppendUint(b, n.start, 10)
	b = append(b, `" data-n="`...)
	b = strconv.AppendUint(b, n.count, 10)
	b = append(b, `"><title>`...)
	b = appendEscaped(b, name)
	b = append(b, "&#10;"...)
	b = appendMeta(b, f, n.frame == nil, n.count, g.total)
	b = append(b, `</title><rect x="`...)
	b = appendNum(b, x)
	b = append(b, `" y="`...)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, `" width="`...)
	b = appendNum(b, wd)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, rowHeight-1, 10)
	b = append(b, `" fill="`...)
	b = append(b, fill...)
	b = append(b, `"/><text x="`...)
	b = appendNum(b, x+labelInset)
	b = append(b, `" y="`...)
	b = strconv.AppendInt(b, int64(y+rowHeight-4), 10)
	b = append(b, `">`...)
	b = appendEscaped(b, label(name, wd))
	return append(b, "</text></g>\n"...)
}

// style is the graph's CSS.
const style = `#frames g { cursor: pointer; }
#frames g:hover rect { stroke: #222; stroke-width: 0.8; }
#frames rect { stroke: ` + lineColor + `; stroke-width: 0.5; }
#frames text { pointer-events: none; fill: #111; }
#frames .dim rect { opacity: 0.55; }
#title { font-size: 16px; }
#unzoom, #search { cursor: pointer; fill: #1d4f91; }
#unzoom:hover, #search:hover { text-decoration: underline; }
#unzoom { visibility: hidden; }
#legend { font-size: 11px; fill: #444; }
`

// appendMeta appends a frame's tooltip line after its name: module,
// language, kind, then samples and their share of all samples.
func appendMeta(b []byte, f *stack.Frame, root bool, count, total uint64) []byte {
	if !root {
		if f.Module != "" {
			b = appendEscaped(b, f.Module)
			b = append(b, ", "...)
		}
		if !f.Kernel {
			b = append(b, langLabel(f.Lang)...)
			b = append(b, ", "...)
		}
		if f.Inlined {
			b = append(b, "inlined, "...)
		}
	}
	b = strconv.AppendUint(b, count, 10)
	if count == 1 {
		b = append(b, " sample, "...)
	} else {
		b = append(b, " samples, "...)
	}
	return append(b, percent(count, total)...)
}

// appendLegend appends a swatch and a name for each language family
// present, in the header's second row.
func appendLegend(b []byte, langs []bool, kernel, unknown bool) []byte {
	type entry struct {
		label string
		p     palette
	}
	var es []entry
	for _, l := range legendLangs {
		if langs[l] {
			es = append(es, entry{langLabel(l), langPalettes[l]})
		}
	}
	if kernel {
		es = append(es, entry{"kernel", kernelPalette})
	}
	if unknown {
		es = append(es, entry{"unknown", unknownPalette})
	}
	if len(es) == 0 {
		return b
	}
	b = append(b, "<g id=\"legend\">\n"...)
	x := float64(padX)
	for _, e := range es {
		b = append(b, `<rect x="`...)
		b = appendNum(b, x)
		b = append(b, `" y="33" width="10" height="10" fill="`...)
		b = append(b, legendColor(e.p)...)
		b = append(b, `"/><text x="`...)
		b = appendNum(b, x+14)
		b = append(b, `" y="42">`...)
		b = append(b, e.label...)
		b = append(b, "</text>\n"...)
		x += 14 + float64(len(e.label))*6.6 + 14
	}
	return append(b, "</g>\n"...)
}

// appendText appends a <text> with an id; anchor "" is the start.
func appendText(b []byte, id string, x, y float64, anchor, s string) []byte {
	b = append(b, `<text id="`...)
	b = append(b, id...)
	b = append(b, `" x="`...)
	b = appendNum(b, x)
	b = append(b, `" y="`...)
	b = appendNum(b, y)
	if anchor != "" {
		b = append(b, `" text-anchor="`...)
		b = append(b, anchor...)
	}
	b = append(b, `">`...)
	b = appendEscaped(b, s)
	return append(b, "</text>\n"...)
}

// label is name cut to fit a frame width px wide: whole, or its first
// characters and "..", or "" when fewer than three characters fit. The
// graph's script cuts labels the same way when it zooms.
func label(name string, width float64) string {
	fit := int((width - 2*labelInset) / charWidth)
	if fit < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= fit {
		return name
	}
	end, n := 0, 0
	for i := range name {
		if n == fit-2 {
			end = i
			break
		}
		n++
	}
	return name[:end] + ".."
}

// appendNum appends v with at most two decimals, trailing zeros dropped.
func appendNum(b []byte, v float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', 2, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b[start:]) == "-0" {
		b = append(b[:start], '0')
	}
	return b
}

// appendEscaped appends s as XML character data, also fit for a quoted
// attribute: markup characters become entities, and what XML 1.0 cannot
// carry (control characters, invalid UTF-8) becomes U+FFFD.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b = append(b, "&amp;"...)
			case c == '<':
				b = append(b, "&lt;"...)
			case c == '>':
				b = append(b, "&gt;"...)
			case c == '"':
				b = append(b, "&quot;"...)
			case c == '\'':
				b = append(b, "&apos;"...)
			case c == '\t':
				b = append(b, "&#9;"...)
			case c == '\n':
				b = append(b, "&#10;"...)
			case c == '\r':
				b = append(b, "&#13;"...)
			case c < 0x20:
				b = append(b, "\uFFFD"...)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

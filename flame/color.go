package flame

import (
	"math"

	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

// palette is a family of colours: hues from Hue to Hue+HueSpan degrees,
// saturation and lightness (percent) within their ranges. Where a frame
// falls in its family is a hash of its name, so a function keeps its
// colour from one graph to the next.
type palette struct {
	Hue, HueSpan float64
	Sat, SatSpan float64
	Lit, LitSpan float64
}

// Language families: each a hue range of its own, the kernel red, frames
// of unknown language a desaturated sand.
var (
	langPalettes = map[types.Lang]palette{
		types.LangGo:        {Hue: 182, HueSpan: 24, Sat: 55, SatSpan: 25, Lit: 55, LitSpan: 15}, // cyan to azure
		types.LangRust:      {Hue: 14, HueSpan: 16, Sat: 60, SatSpan: 25, Lit: 52, LitSpan: 14},  // rust orange
		types.LangC:         {Hue: 44, HueSpan: 14, Sat: 75, SatSpan: 20, Lit: 52, LitSpan: 14},  // yellow
		types.LangCPlusPlus: {Hue: 92, HueSpan: 40, Sat: 40, SatSpan: 25, Lit: 50, LitSpan: 15},  // green
		types.LangZig:       {Hue: 258, HueSpan: 30, Sat: 45, SatSpan: 25, Lit: 65, LitSpan: 12}, // violet
		types.LangAsm:       {Hue: 318, HueSpan: 20, Sat: 40, SatSpan: 25, Lit: 62, LitSpan: 12}, // pink
	}
	kernelPalette  = palette{Hue: 352, HueSpan: 14, Sat: 65, SatSpan: 20, Lit: 58, LitSpan: 12} // red
	unknownPalette = palette{Hue: 30, HueSpan: 30, Sat: 8, SatSpan: 14, Lit: 66, LitSpan: 14}   // sand to grey
)

const (
	rootColor  = "#c8c8c8"
	lineColor  = "#ffffff" // frame outlines, the background showing through
	background = "#f4f4f4"
)

// legendLangs are the languages the legend lists, in its order.
var legendLangs = []types.Lang{types.LangGo, types.LangRust, types.LangC, types.LangCPlusPlus, types.LangZig, types.LangAsm}

// langLabel is how the graph names a language.
func langLabel(l types.Lang) string {
	switch l {
	case types.LangGo:
		return "Go"
	case types.LangRust:
		return "Rust"
	case types.LangC:
		return "C"
	case types.LangCPlusPlus:
		return "C++"
	case types.LangZig:
		return "Zig"
	case types.LangAsm:
		return "asm"
	}
	return "unknown"
}

// framePalette is the family a frame is coloured from under ColorBy
// "lang".
func framePalette(f *stack.Frame) palette {
	if f.Kernel {
		return kernelPalette
	}
	if p, ok := langPalettes[f.Lang]; ok {
		return p
	}
	return unknownPalette
}

// frameColor is f's fill, "#rrggbb". byModule takes the hue from the
// module's name (every frame of one library in one hue) and only the
// shade from the function's.
func frameColor(f *stack.Frame, byModule bool) string {
	h := hash32(f.Name)
	// Three independent-looking fractions from one hash.
	a := float64(h&0x3ff) / 0x3ff
	b := float64(h>>10&0x3ff) / 0x3ff
	c := float64(h>>20&0x3ff) / 0x3ff
	if byModule {
		if f.Module == "" {
			return hsl(0, 0, 62+14*a)
		}
		return hsl(float64(hash32(f.Module)%360), 45+25*b, 55+17*c)
	}
	p := framePalette(f)
	lit := p.Lit + p.LitSpan*c
	if f.Inlined {
		lit = min(lit+8, 88) // an inline expansion, paler than its caller's family
	}
	return hsl(p.Hue+p.HueSpan*a, p.Sat+p.SatSpan*b, lit)
}

// legendColor is the middle of a family, for the legend's swatches.
func legendColor(p palette) string {
	return hsl(p.Hue+p.HueSpan/2, p.Sat+p.SatSpan/2, p.Lit+p.LitSpan/2)
}

// hash32 is 32-bit FNV-1a of s: stable across runs and platforms.
func hash32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	// Mix the high bits down: short names differ mostly in the low ones.
	h ^= h >> 15
	h *= 0x2c1b3c6d
	h ^= h >> 12
	return h
}

// hsl converts a hue (degrees), saturation and lightness (percent) to
// "#rrggbb", which every SVG renderer understands.
func hsl(h, s, l float64) string {
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	s, l = s/100, l/100
	chroma := (1 - math.Abs(2*l-1)) * s
	x := chroma * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - chroma/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = chroma, x, 0
	case h < 120:
		r, g, b = x, chroma, 0
	case h < 180:
		r, g, b = 0, chroma, x
	case h < 240:
		r, g, b = 0, x, chroma
	case h < 300:
		r, g, b = x, 0, chroma
	default:
		r, g, b = chroma, 0, x
	}
	const hex = "0123456789abcdef"
	out := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range [3]float64{r + m, g + m, b + m} {
		n := int(math.Round(255 * min(max(v, 0), 1)))
		out[1+2*i], out[2+2*i] = hex[n>>4], hex[n&15]
	}
	return string(out)
}

package naming

import (
	"regexp"
	"strings"
)

// Pattern is a wildcard over names as the tools print them, the one
// matcher of function names (goprobe's definitions and listing), USDT
// providers and names, and mapped files: "*" matches any text ("::",
// ".", "/" and "<>" included), "?" one character, "\*" and "\?" the
// character itself; every other character is itself, brackets too (Go
// generics main.Pair[int], C++ templates ns::Tmpl<int>). A "*" right
// after "(" is Go's pointer receiver, not a wildcard: main.(*T).* is
// every method of *T.
//
//	main.*            every function of Go's package main
//	ns::Tmpl<*>::get  get of every instance of the C++ template ns::Tmpl
//	*alloc*           every name holding "alloc"
type Pattern struct {
	text string
	lit  string         // the name it matches without wildcards (escapes undone)
	re   *regexp.Regexp // nil: no wildcard, lit itself
}

// IsPattern reports whether s holds a wildcard (see Pattern).
func IsPattern(s string) bool {
	return NewPattern(s).re != nil
}

// NewPattern compiles pat (see Pattern).
func NewPattern(pat string) Pattern {
	var b, lit strings.Builder
	wild := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat) && (pat[i+1] == '*' || pat[i+1] == '?'):
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			lit.WriteByte(pat[i])
		case c == '*' && i > 0 && pat[i-1] == '(':
			b.WriteString(`\*`)
			lit.WriteByte(c)
		case c == '*':
			b.WriteString(".*")
			wild = true
		case c == '?':
			b.WriteString(".")
			wild = true
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			lit.WriteByte(c)
		}
	}
	p := Pattern{text: pat, lit: lit.String()}
	if wild {
		p.re = regexp.MustCompile("^(?s:" + b.String() + ")$")
	}
	return p
}

// Wild reports whether the pattern holds a wildcard.
func (p Pattern) Wild() bool { return p.re != nil }

// String is the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether name matches: the whole name, or without
// wildcards the name itself.
func (p Pattern) Match(name string) bool {
	if p.re == nil {
		return name == p.lit
	}
	return p.re.MatchString(name)
}

// Near is the edit distance from the pattern to name, in which a
// wildcard costs nothing and every other character kept, changed, added
// or dropped one ("*" matches any text), and whether that is near: at
// most a third of the pattern's characters.
func (p Pattern) Near(name string) (int, bool) {
	limit := len(p.lit)/3 + 1
	d := p.distance(name, limit)
	return d, d <= limit
}

// distance is Near's distance, or more than limit once every way is
// past it.
func (p Pattern) distance(name string, limit int) int {
	pat := p.text
	prev := make([]int, len(name)+1)
	cur := make([]int, len(name)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		star := c == '*' && !(i > 0 && pat[i-1] == '(')
		best := limit + 1
		switch {
		case star:
			cur[0] = prev[0]
		default:
			cur[0] = prev[0] + 1
		}
		for j := 1; j <= len(name); j++ {
			switch {
			case star: // nothing more, or one more character
				cur[j] = min(prev[j], cur[j-1])
			default:
				sub := prev[j-1]
				if c != '?' && c != name[j-1] {
					sub++
				}
				cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			}
			best = min(best, cur[j])
		}
		best = min(best, cur[0])
		if best > limit {
			return best
		}
		prev, cur = cur, prev
	}
	return prev[len(name)]
}

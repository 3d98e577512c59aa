// Package naming is the project's one naming policy for code: how a
// symbol becomes the name users read and type (demangled C++ and Rust with
// template arguments kept, no parameter list, no legacy Rust hash), symbol
// versions, and GCC's clone suffixes (.part.0, .cold, .constprop.1), which
// apply only to code a GCC-style producer made.
package naming

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// dropRustHash drops the hash suffix of a legacy Rust symbol's name
// (::h followed by 16 hex digits), checked by hand: a regular expression
// scans every C++ name, template arguments and all.
func dropRustHash(d string) string {
	const n = len("::h") + 16
	if len(d) < n || d[len(d)-n:len(d)-16] != "::h" {
		return d
	}
	for _, c := range d[len(d)-16:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return d
		}
	}
	return d[:len(d)-n]
}

// Demangle returns a C++ or Rust symbol as users write the function:
// template arguments kept (std::vector<int>::_M_realloc_insert<int const&>),
// no parameter list, no legacy Rust hash; ok is false for a name that is not
// mangled.
func Demangle(sym string) (name string, ok bool) {
	if !strings.HasPrefix(sym, "_Z") && !strings.HasPrefix(sym, "_R") && !strings.HasPrefix(sym, "__Z") {
		return "", false
	}
	// Speed: without the fast path gofunct's listing of cpp-real takes 2x the CPU
	// (bash bench/ab.sh main . 11 gofunct "$(. bench/lib.sh; fixture cpp-real)", fast path disabled in one tree).
	if d, ok := fastDemangle(sym); ok {
		return dropRustHash(d), true
	}
	d, err := demangle.ToString(sym, demangle.NoParams, demangle.NoClones)
	if err != nil {
		return "", false
	}
	return dropRustHash(d), true
}

// Display is sym demangled, or sym itself.
func Display(sym string) string {
	if d, ok := Demangle(sym); ok {
		return d
	}
	return sym
}

// StripTemplates drops every template argument list from a C++ or Rust
// name (std::vector<int>::push_back → std::vector::push_back), the short
// form users also type; operator<, operator<< and operator<=> keep their
// angle brackets.
func StripTemplates(name string) string {
	if !strings.Contains(name, "<") {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	depth := 0
	for i := 0; i < len(name); i++ {
		if depth == 0 {
			// Copy the run up to the next angle bracket at once.
			j := strings.IndexAny(name[i:], "<>")
			if j < 0 {
				b.WriteString(name[i:])
				break
			}
			b.WriteString(name[i : i+j])
			i += j
		}
		c := name[i]
		if depth == 0 && (c == '<' || c == '>') && strings.HasSuffix(strings.TrimRight(name[:i], " "), "operator") {
			// operator<, operator<<, operator<=>, operator>, operator>>.
			j := i
			for j < len(name) && (name[j] == '<' || name[j] == '>' || name[j] == '=') {
				j++
			}
			b.WriteString(name[i:j])
			i = j - 1
			continue
		}
		switch {
		case c == '<':
			depth++
		case c == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// StripVersion drops a symbol version: malloc@@GLIBC_2.2.5 → malloc.
func StripVersion(sym string) string {
	name, _, _ := strings.Cut(sym, "@")
	return name
}

// Clone splits a GCC clone's symbol into the function it was cut from and
// the kind of clone: "part" (the rest of a partially inlined function) and
// "cold" (its unlikely code) continue a call; "isra", "constprop",
// "lto_priv", "clone" and "specialized" are full copies. The outermost
// kind wins where suffixes stack (foo.constprop.0.isra.0, foo.part.0.cold),
// except that any ".cold" is cold code. Apply it only to code from a
// producer that makes such clones (GCC, and LLVM's .cold): a Go function
// may well be called maps.clone.
//
// The suffix is the run of dot-separated components at the end that are
// each a kind or a number, from its first kind on; the function's name
// before it is not empty.
func Clone(sym string) (base, kind string, ok bool) {
	if strings.IndexByte(sym, '.') < 0 {
		return "", "", false // most names, found so without a byte loop
	}
	start := -1 // the dot before the suffix's first kind
	for end := len(sym); ; {
		dot := strings.LastIndexByte(sym[:end], '.')
		if dot < 0 {
			break
		}
		part := sym[dot+1 : end]
		if cloneKind(part) {
			if dot > 0 {
				start = dot
			}
		} else if !allDigits(part) {
			break
		}
		end = dot
	}
	if start < 0 {
		return "", "", false
	}
	kind, _, _ = strings.Cut(sym[start+1:], ".")
	if strings.Contains(sym[start+1+len(kind):], ".cold") {
		kind = "cold"
	}
	return sym[:start], kind, true
}

// cloneKind reports whether s is one of GCC's clone suffixes.
func cloneKind(s string) bool {
	switch s {
	case "part", "cold", "isra", "constprop", "lto_priv", "clone", "specialized":
		return true
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ContinuesCall reports whether code of this clone kind runs inside a call
// already entered (part, cold) rather than being entered by calls.
func ContinuesCall(kind string) bool { return kind == "part" || kind == "cold" }

// Plainer reports whether alias a is the name to show rather than b: the
// fewest leading underscores, then the shortest, then the first in order.
func Plainer(a, b string) bool {
	ua, ub := len(a)-len(strings.TrimLeft(a, "_")), len(b)-len(strings.TrimLeft(b, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

package naming

import (
	"strings"
	"sync"
	"unsafe"
)

// A fast demangler for the common subset of Itanium C++ names, in the
// form Demangle prints them (no parameters, no clone suffix): nested and
// unscoped names, template arguments of builtin, class, pointer,
// reference, const, function and array types, integer and enum literals,
// argument packs, substitutions, operators (conversion operators too),
// constructors (inherited ones too), destructors, ABI tags, names local to
// a function (printed with the function's parameters) and lambdas'
// closure types, and in a function template's types its template
// parameters, expansions of its packs (one parameter per element) and
// the reference collapsing of a parameter's type (&& of T& is T&).
// github.com/ianlancetaylor/demangle, the reference, builds a syntax tree
// and rewrites it, which costs C++ programs most of a listing; this parser
// writes the string as it reads and gives up (fast returns false) at
// anything outside that subset: other template parameters, member-pointer
// types, expressions, generic lambdas, other unnamed names, volatile or
// restrict, other references to references, and a substitution of a type
// the library reads by its context (a template parameter, a lambda
// parameter's type, a pack expansion).
// Demangle then asks the library. TestFastDemangle checks every mangled
// name of libstdc++'s debug file and of a C++ program over Boost and
// nlohmann::json against the library, to the byte, and
// TestFastDemangleMutated 100,000 of them with a byte changed. A name
// outside the subset sets the parser's sticky failed state, after which
// every step returns at once; nothing panics.

// itEntry is a parsed name or type: its text, the source name a
// constructor or destructor of it takes (empty when it has none), and
// what the type rules need.
type itEntry struct {
	s    string
	last string
	// A function type is left and right of where a declarator goes:
	// "long" and "(long)"; an array type "char const" and "[10]". s is
	// then left, a space and right, and right starts at split (0 for
	// other types).
	split   int32
	builtin bool // a builtin type ("int"), for literals
	ref     bool // a reference type
	konst   bool // const at the top
	array   bool // left and right are an array's
	// noWrap is a pointer or reference to a function or an array: the
	// fast path spells no declarator around it.
	noWrap bool
	// tparam is a type made of a template parameter (T_, PT_): the
	// library resolves a substitution of it by where it is used, so the
	// fast path gives up at one.
	tparam bool
	// rvalue is an rvalue reference (ref, written &&); value a template
	// argument that is a value, not a type.
	rvalue, value bool
	// noReturn is a name whose last component is a constructor, a
	// destructor or a conversion operator: a function template of it
	// encodes no return type.
	noReturn bool
}

// composite reports whether e needs a declarator's syntax around it.
func (e itEntry) composite() bool { return e.split > 0 || e.noWrap }

// left and right are a function or array type's parts (see itEntry).
func (e itEntry) left() string {
	if e.split == 0 {
		return ""
	}
	return e.s[:e.split-1]
}

func (e itEntry) right() string { return e.s[e.split:] }

// declarator is the function or array type whose parts are left and
// right.
func (p *itParser) declarator(left, right string, array bool) itEntry {
	return itEntry{s: p.cat(left, " ", right), split: int32(len(left) + 1), array: array}
}

type itParser struct {
	s    string
	i    int
	subs []itEntry
	// last is the argument list the last template-args parsed held;
	// tparams, while a function template's types are parsed (see
	// local), the list its template parameters (T_, T0_) name.
	last, tparams []itArg
	lastEnd       int // where the last template-args ended
	// expanding is set inside a pack expansion (Dp), where a template
	// parameter may name an argument pack: its element elem, and packLen
	// is set to the pack's length.
	expanding     bool
	elem, packLen int
	argStack      []itArg // template arguments being read (see template)
	// buf holds the text of the names and types read so far, args the
	// argument lists: arenas kept from name to name (see cat).
	buf  []byte
	args []itArg
	// failed is set at the first byte outside the fast path's subset:
	// every step returns at once after it, its result unused, and
	// fastDemangle returns false (a sticky error, as a scanner keeps).
	failed bool
}

// itArg is one template argument: a type or value (e), or a pack of
// them (elts).
type itArg struct {
	e    itEntry // a pack's text is its elements' joined
	pack bool
	elts []itEntry
}

// itParsers keep parsers, and their substitution tables, for reuse.
var itParsers = sync.Pool{New: func() any { return &itParser{subs: make([]itEntry, 0, 64)} }}

// fail gives up on the name (see failed).
func (p *itParser) fail() itEntry {
	p.failed = true
	return itEntry{}
}

// fastDemangle demangles sym as Demangle's library call does, or
// returns false.
func fastDemangle(sym string) (name string, ok bool) {
	if !strings.HasPrefix(sym, "_Z") || legacyRust(sym) {
		return "", false
	}
	p := itParsers.Get().(*itParser)
	p.s, p.i = sym, 2
	defer func() {
		clear(p.subs)
		p.s, p.subs, p.failed = "", p.subs[:0], false
		p.last, p.tparams, p.expanding = nil, nil, false
		clear(p.argStack)
		p.argStack = p.argStack[:0]
		clear(p.args)
		p.buf, p.args = p.buf[:0], p.args[:0]
		itParsers.Put(p)
	}()
	if c := p.peek(); c == 'G' || c == 'T' {
		return "", false // special names: guard variables, vtables, thunks
	}
	e := p.name(true)
	if p.failed {
		return "", false
	}
	return strings.Clone(e.s), true
}

// cat is the concatenation of parts, written to the parser's arena: the
// string views the arena's bytes, which no later write changes until the
// next name starts (a full arena is replaced, the old one kept by the
// strings that view it). So a name costs one allocation, its final copy,
// where concatenating would allocate at every step.
func (p *itParser) cat(parts ...string) string {
	n := 0
	for _, s := range parts {
		n += len(s)
	}
	if n == 0 {
		return ""
	}
	if cap(p.buf)-len(p.buf) < n {
		p.buf = make([]byte, 0, max(2*cap(p.buf), n, 4096))
	}
	start := len(p.buf)
	for _, s := range parts {
		p.buf = append(p.buf, s...)
	}
	return unsafe.String(&p.buf[start], n)
}

// join is strings.Join in the parser's arena (see cat).
func (p *itParser) join(elems []string, sep string) string {
	switch len(elems) {
	case 0:
		return ""
	case 1:
		return elems[0]
	}
	n := len(sep) * (len(elems) - 1)
	for _, s := range elems {
		n += len(s)
	}
	if cap(p.buf)-len(p.buf) < n {
		p.buf = make([]byte, 0, max(2*cap(p.buf), n, 4096))
	}
	start := len(p.buf)
	for i, s := range elems {
		if i > 0 {
			p.buf = append(p.buf, sep...)
		}
		p.buf = append(p.buf, s...)
	}
	return unsafe.String(&p.buf[start], n)
}

// legacyRust reports whether the library reads sym as a legacy Rust
// symbol: _ZN...17h<16 hex digits>E, maybe followed by a suffix after E.
func legacyRust(sym string) bool {
	if !strings.HasPrefix(sym, "_ZN") {
		return false
	}
	if strings.IndexByte(sym, '.') >= 0 { // most names have no suffix: no search from the end
		if pos := strings.LastIndex(sym, "E."); pos > 0 {
			sym = sym[:pos+1]
		}
	}
	return strings.HasSuffix(sym, "E") && len(sym) > 23 && sym[len(sym)-20:len(sym)-17] == "17h"
}

// peek is the next byte, 0 at the end.
func (p *itParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *itParser) peek2() byte {
	if p.i+1 < len(p.s) {
		return p.s[p.i+1]
	}
	return 0
}

func (p *itParser) add(e itEntry) { p.subs = append(p.subs, e) }

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }
func isLowerByte(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpperByte(c byte) bool { return 'A' <= c && c <= 'Z' }

// name parses <name>; top is the function's own name, whose nested
// name may carry the method's qualifiers (dropped, as without
// parameters).
func (p *itParser) name(top bool) itEntry {
	switch p.peek() {
	case 'N':
		return p.nested(top)
	case 'S':
		if p.peek2() != 't' {
			return p.fail()
		}
		p.i += 2
		u := p.unqualified()
		if p.failed {
			return itEntry{}
		}
		e := itEntry{s: p.cat("std::", u.s), last: u.last}
		if p.peek() == 'I' {
			p.add(e)
			e = itEntry{s: p.template(e.s), last: e.last}
		}
		return e
	case 'Z':
		return p.local(top)
	}
	e := p.unqualified()
	if p.failed {
		return itEntry{}
	}
	if p.peek() == 'I' {
		if strings.HasPrefix(e.s, "{lambda(") {
			return p.fail() // a closure type takes no template arguments here
		}
		p.add(e)
		e = itEntry{s: p.template(e.s), last: e.last}
	}
	return e
}

// nested parses N [<CV-qualifiers>] [<ref-qualifier>] <prefix> E.
func (p *itParser) nested(top bool) itEntry {
	p.i++
	quals := false
	for {
		c := p.peek()
		if c == 'K' || c == 'V' || c == 'r' {
			quals = true
			p.i++
			continue
		}
		if c == 'H' || c == 'D' && strings.IndexByte("xoOw", p.peek2()) >= 0 {
			return p.fail()
		}
		break
	}
	if c := p.peek(); c == 'R' || c == 'O' {
		quals = true
		p.i++
	}
	if quals && !top {
		return p.fail()
	}
	return p.prefix()
}

// prefix parses the components of a nested name and its closing E.
func (p *itParser) prefix() itEntry {
	var cur itEntry
	have := false
	lastName := ""
	haveLast := false
	for {
		c := p.peek()
		var next itEntry
		switch {
		case isDigitByte(c) || isLowerByte(c) || c == 'L' || c == 'U':
			next = p.unqualified()
		case c == 'C':
			p.i++
			inheriting := p.peek() == 'I'
			if inheriting {
				p.i++ // CI1, CI2: a constructor inherited from the type that follows, not printed
			}
			if !haveLast || lastName == "" || p.peek() < '1' || p.peek() > '5' {
				return p.fail()
			}
			p.i++
			if inheriting {
				if b := p.typ(); b.s == "" || b.tparam {
					return p.fail()
				}
			}
			next = p.tags(itEntry{s: lastName, last: lastName, noReturn: true})
		case c == 'D':
			if !haveLast || lastName == "" || strings.IndexByte("01245", p.peek2()) < 0 {
				return p.fail()
			}
			p.i += 2
			next = p.tags(itEntry{s: p.cat("~", lastName), last: lastName, noReturn: true})
		case c == 'S':
			next = p.prefixSubstitution()
		case c == 'I':
			if !have || strings.HasSuffix(cur.s, "}") {
				return p.fail() // none, or a closure type's
			}
			next = itEntry{s: p.template(cur.s), last: cur.last, noReturn: cur.noReturn}
			have = false
		case c == 'E':
			if !have {
				return p.fail()
			}
			p.i++
			return cur
		default:
			return p.fail()
		}
		if p.failed {
			return itEntry{}
		}
		lastName, haveLast = next.last, true
		if have {
			cur = itEntry{s: p.cat(cur.s, "::", next.s), last: next.last, noReturn: next.noReturn}
		} else {
			cur, have = next, true
		}
		if c != 'S' && p.peek() != 'E' {
			p.add(cur)
		}
	}
}

// stdAbbrev holds the standard substitutions S[tabsiod] as the library
// prints them outside a constructor or destructor's prefix.
var stdAbbrev = [256]itEntry{
	't': {s: "std", last: "std"},
	'a': {s: "std::allocator", last: "allocator"},
	'b': {s: "std::basic_string", last: "basic_string"},
	's': {s: "std::string", last: "string"},
	'i': {s: "std::istream", last: "istream"},
	'o': {s: "std::ostream", last: "ostream"},
	'd': {s: "std::iostream", last: "iostream"},
}

// prefixSubstitution parses a substitution that is a component of a
// nested name.
func (p *itParser) prefixSubstitution() itEntry {
	c2 := p.peek2()
	if isDigitByte(c2) || c2 == '_' || isUpperByte(c2) {
		return p.substitution()
	}
	e := stdAbbrev[c2]
	if e.s == "" {
		return p.fail()
	}
	p.i += 2
	switch p.peek() {
	case 'B':
		return p.fail()
	case 'C', 'D':
		// The library spells std::string and the streams long
		// before a constructor or destructor.
		if c2 != 't' && c2 != 'a' && c2 != 'b' {
			return p.fail()
		}
	}
	return e
}

// substitution parses S_ and S<seq-id>_.
func (p *itParser) substitution() itEntry {
	p.i++ // S
	id := 0
	if p.peek() == '_' {
		p.i++
	} else {
		for {
			c := p.peek()
			if id >= 0x80000000/36-36 {
				return p.fail()
			}
			switch {
			case c == '_':
				id++
			case isDigitByte(c):
				id = id*36 + int(c-'0')
			case isUpperByte(c):
				id = id*36 + int(c-'A') + 10
			default:
				return p.fail()
			}
			p.i++
			if c == '_' {
				break
			}
		}
	}
	if id >= len(p.subs) || p.subs[id].tparam {
		return p.fail()
	}
	return p.subs[id]
}

// unqualified parses a source name, an operator name or an internal
// name (L <source-name>), with its ABI tags.
func (p *itParser) unqualified() itEntry {
	c := p.peek()
	var e itEntry
	switch {
	case isDigitByte(c):
		n := p.sourceName()
		e = itEntry{s: n, last: n}
	case c == 'L':
		p.i++
		if !isDigitByte(p.peek()) {
			return p.fail()
		}
		n := p.sourceName()
		if p.peek() == '_' {
			return p.fail() // a discriminator
		}
		e = itEntry{s: n, last: n}
	case c == 'U':
		e = p.unnamed()
	case c == 'c' && p.peek2() == 'v':
		// A conversion operator: operator <type>, of a type that needs
		// no declarator syntax and names no template parameter.
		p.i += 2
		t := p.typ()
		if t.s == "" || t.composite() || t.tparam {
			return p.fail()
		}
		e = itEntry{s: p.cat("operator ", t.s), noReturn: true}
	case isLowerByte(c) && p.i+2 <= len(p.s):
		op, ok := itOperators[p.s[p.i:p.i+2]]
		if !ok {
			return p.fail()
		}
		p.i += 2
		e = itEntry{s: op}
	default:
		return p.fail()
	}
	if p.failed {
		return itEntry{}
	}
	return p.tags(e)
}

// tags appends the ABI tags (B <source-name>) that follow.
func (p *itParser) tags(e itEntry) itEntry {
	for p.peek() == 'B' {
		p.i++
		n := p.sourceName()
		if p.failed {
			return itEntry{}
		}
		e.s = p.cat(e.s, "[abi:", n, "]")
	}
	return e
}

// itOperators are the operator names the fast path spells, as the
// library prints them.
var itOperators = map[string]string{
	"aN": "operator&=", "aS": "operator=", "aa": "operator&&", "ad": "operator&", "an": "operator&",
	"cl": "operator()", "cm": "operator,", "co": "operator~", "dV": "operator/=", "da": "operator delete[]",
	"de": "operator*", "dl": "operator delete", "dv": "operator/", "eO": "operator^=", "eo": "operator^",
	"eq": "operator==", "ge": "operator>=", "gt": "operator>", "ix": "operator[]", "lS": "operator<<=",
	"le": "operator<=", "ls": "operator<<", "lt": "operator<", "mI": "operator-=", "mL": "operator*=",
	"mi": "operator-", "ml": "operator*", "mm": "operator--", "na": "operator new[]", "ne": "operator!=",
	"ng": "operator-", "nt": "operator!", "nw": "operator new", "oR": "operator|=", "oo": "operator||",
	"or": "operator|", "pL": "operator+=", "pl": "operator+", "pm": "operator->*", "pp": "operator++",
	"ps": "operator+", "pt": "operator->", "rM": "operator%=", "rS": "operator>>=", "rm": "operator%",
	"rs": "operator>>", "ss": "operator<=>",
}

// sourceName parses <length> <identifier>.
func (p *itParser) sourceName() string {
	n := 0
	if !isDigitByte(p.peek()) {
		p.failed = true
		return ""
	}
	for isDigitByte(p.peek()) {
		if n >= 0x80000000/10-10 {
			p.failed = true
			return ""
		}
		n = n*10 + int(p.s[p.i]-'0')
		p.i++
	}
	if n <= 0 || len(p.s)-p.i < n {
		p.failed = true
		return ""
	}
	id := p.s[p.i : p.i+n]
	p.i += n
	const anon = "_GLOBAL_"
	if strings.HasPrefix(id, anon) && len(id) > len(anon)+2 {
		if c1, c2 := id[len(anon)], id[len(anon)+1]; (c1 == '.' || c1 == '_' || c1 == '$') && c2 == 'N' {
			id = "(anonymous namespace)"
		}
	}
	return id
}

// template parses <template-args> and returns base with them.
func (p *itParser) template(base string) string {
	if p.peek() != 'I' {
		p.failed = true
		return ""
	}
	p.i++
	// The arguments gather on the parser's stack (nested lists push
	// and pop above them), then go to a slice of their own size.
	mark := len(p.argStack)
	n := len(base) + 3
	for p.peek() != 'E' {
		a := p.templateArg(false)
		if p.failed {
			return ""
		}
		if p.peek() == 'Q' {
			p.failed = true
			return "" // a constraint
		}
		p.argStack = append(p.argStack, a)
		if !a.pack || len(a.elts) > 0 {
			n += len(a.e.s) + 2
		}
	}
	p.i++
	// The list moves to the arena of lists, where a full arena is
	// replaced as the text's is (see cat).
	k := len(p.argStack) - mark
	if cap(p.args)-len(p.args) < k {
		p.args = make([]itArg, 0, max(2*cap(p.args), k, 64))
	}
	args := append(p.args[len(p.args):len(p.args):len(p.args)+k], p.argStack[mark:]...)
	p.args = p.args[:len(p.args)+k]
	clear(p.argStack[mark:])
	p.argStack = p.argStack[:mark]
	p.last, p.lastEnd = args, p.i
	// The arguments' text is known before it is written.
	if cap(p.buf)-len(p.buf) < n {
		p.buf = make([]byte, 0, max(2*cap(p.buf), n, 4096))
	}
	start := len(p.buf)
	p.buf = append(p.buf, base...)
	if strings.HasSuffix(base, "<") {
		p.buf = append(p.buf, ' ') // operator< <int>
	}
	p.buf = append(p.buf, '<')
	first, last := true, byte('<')
	for _, a := range args {
		if a.pack && len(a.elts) == 0 {
			continue // an empty pack
		}
		if !first {
			p.buf = append(p.buf, ", "...)
			last = ' '
		}
		p.buf = append(p.buf, a.e.s...)
		if a.e.s != "" {
			last = a.e.s[len(a.e.s)-1]
		}
		first = false
	}
	if last == '>' {
		p.buf = append(p.buf, ' ')
	}
	p.buf = append(p.buf, '>')
	return unsafe.String(&p.buf[start], len(p.buf)-start)
}

// templateArg parses one <template-arg>: a type or a value, or an
// argument pack (an empty one the library leaves out of the list).
func (p *itParser) templateArg(inPack bool) itArg {
	switch p.peek() {
	case 'L':
		l := p.literal()
		return itArg{e: itEntry{s: l, value: true}}
	case 'I', 'J':
		if inPack {
			p.failed = true
			return itArg{}
		}
		p.i++
		a := itArg{pack: true}
		var args []string
		for p.peek() != 'E' {
			el := p.templateArg(true)
			if p.failed {
				return itArg{}
			}
			if p.peek() == 'Q' {
				p.failed = true
				return itArg{}
			}
			args = append(args, el.e.s)
			a.elts = append(a.elts, el.e)
		}
		p.i++
		a.e.s = p.join(args, ", ")
		return a
	case 'X', 'T', 0:
		p.failed = true
		return itArg{}
	}
	e := p.typ()
	return itArg{e: e}
}

package naming

import (
	"strconv"
	"strings"
)

// Names local to a function, closure types and a function template's
// parameters, for the fast demangler (itanium.go).

// local parses Z <function encoding> E <entity> [<discriminator>], a name
// local to a function: the library prints the function with its
// parameters (and a member function's qualifiers), then the entity. A
// function template's encoding starts with its return type, unprinted
// (none for a constructor, destructor or conversion operator); its
// parameters may name its template parameters and expand its packs.
// String literals and default arguments are left to the library.
func (p *itParser) local(top bool) itEntry {
	p.i++ // Z
	fn, quals := p.localFunc()
	if p.failed {
		return itEntry{}
	}
	saved := p.tparams
	defer func() { p.tparams = saved }()
	if strings.HasSuffix(fn.s, ">") {
		if !fn.tparam {
			return p.fail() // the arguments parsed last are not the function's
		}
		// A function template: its return type comes first, unprinted
		// (a constructor, destructor or conversion operator has none);
		// its parameters' types may name its template parameters.
		p.tparams = p.last
		if !fn.noReturn {
			if ret := p.typ(); p.failed || ret.composite() {
				return p.fail()
			}
		}
	}
	params := p.localParams()
	if p.failed {
		return itEntry{}
	}
	switch p.peek() {
	case 's', 'd', 'Z':
		return p.fail() // a string literal, a default argument, a local name in a local name
	}
	ent := p.name(top)
	if p.failed || p.peek() == '_' {
		return p.fail() // a discriminator
	}
	return itEntry{s: p.cat(fn.s, "(", p.join(params, ", "), ")", quals, "::", ent.s), last: ent.last}
}

// localFunc reads the name of the function a local name is in, and the
// qualifiers of a const member function (" const").
func (p *itParser) localFunc() (fn itEntry, quals string) {
	if p.peek() == 'N' {
		p.i++
		for c := p.peek(); c == 'K' || c == 'V' || c == 'r'; c = p.peek() {
			if c != 'K' || quals != "" {
				p.failed = true
				return fn, quals
			}
			quals = " const"
			p.i++
		}
		if c := p.peek(); c == 'R' || c == 'O' || c == 'H' {
			p.failed = true
			return fn, quals
		}
		fn = p.prefix()
		// Template arguments of the function itself end right before
		// the nested name's E.
		fn.tparam = p.lastEnd == p.i-1
	} else {
		if p.peek() == 'S' || p.peek() == 'Z' {
			p.failed = true
			return fn, quals
		}
		fn = p.unqualified()
	}
	if p.failed || p.peek() == 'I' {
		p.failed = true
		return fn, quals
	}
	return fn, quals
}

// localParams reads the parameter types of the function a local name is
// in, through its E; none for (void).
func (p *itParser) localParams() []string {
	var params []string
	types := 0 // as written: an expanded empty pack is one
	for p.peek() != 'E' {
		switch c := p.peek(); {
		case c == '.' || c == 'Q' || c == 0, (c == 'R' || c == 'O') && p.peek2() == 'E':
			p.failed = true
			return nil
		}
		types++
		if p.peek() == 'D' && p.peek2() == 'p' {
			p.i += 2
			if params = p.packExpansion(params); p.failed {
				return nil
			}
			continue
		}
		t := p.typ()
		if p.failed || t.composite() && !t.noWrap {
			p.failed = true
			return nil
		}
		params = append(params, t.s)
	}
	p.i++
	if types == 0 {
		p.failed = true
		return nil
	}
	if types == 1 && len(params) == 1 && params[0] == "void" {
		params = nil
	}
	return params
}

// packExpansion reads the type after Dp, a pack expansion, and appends a
// parameter per element of the pack its type names (none for an empty
// pack). The type is read once per element; its substitution candidates,
// once, name the pack: the fast path gives up at them.
func (p *itParser) packExpansion(params []string) []string {
	start, from := p.i, len(p.subs)
	var t itEntry
	for k := 0; ; k++ {
		p.i, p.subs = start, p.subs[:from]
		p.expanding, p.elem, p.packLen = true, k, -1
		t = p.typ()
		p.expanding = false
		if p.failed || p.packLen < 0 {
			p.failed = true
			return nil // no pack in it
		}
		if p.packLen == 0 {
			break
		}
		if t.composite() && !t.noWrap {
			p.failed = true
			return nil
		}
		params = append(params, t.s)
		if k+1 == p.packLen {
			break
		}
	}
	for i := from; i < len(p.subs); i++ {
		p.subs[i].tparam = true
	}
	t.tparam = true
	p.add(t) // the expansion is a candidate too
	return params
}

// unnamed parses a closure type, Ul <lambda parameters> E [<number>] _,
// as {lambda(parameters)#N}; other unnamed types are left to the library.
func (p *itParser) unnamed() itEntry {
	if p.peek2() != 'l' {
		return p.fail()
	}
	p.i += 2
	from := len(p.subs)
	defer func() {
		// The library reads a substitution of a lambda parameter's type
		// in the lambda's template scope: the fast path gives up at one.
		for i := from; i < len(p.subs); i++ {
			p.subs[i].tparam = true
		}
	}()
	// T: a generic lambda's auto parameter.
	params := p.paramTypes(func(c byte) bool { return c == 'T' }, false)
	if p.failed {
		return itEntry{}
	}
	n := 1
	if p.peek() != '_' {
		n = p.number(6) + 2
	}
	if p.failed || p.peek() != '_' {
		return p.fail()
	}
	p.i++
	return itEntry{s: p.cat("{lambda(", p.join(params, ", "), ")#", strconv.Itoa(n), "}")}
}

// number parses the decimal digits of a discriminator or a template
// parameter's index, at most max of them.
func (p *itParser) number(max int) int {
	j := p.i
	for isDigitByte(p.peek()) {
		p.i++
	}
	if j == p.i || p.i-j > max {
		p.failed = true
		return 0
	}
	v := 0
	for _, d := range p.s[j:p.i] {
		v = v*10 + int(d-'0')
	}
	return v
}

// templateParam parses T_ or T<n>_ inside a function template's types:
// the argument it names. A pack is read inside its expansion only, one
// element at a time (an empty pack is the empty entry); a parameter
// outside such a function template is left to the library.
func (p *itParser) templateParam() itEntry {
	p.i++ // T
	n := 0
	if p.peek() != '_' {
		n = p.number(4) + 1
	}
	if p.failed || p.peek() != '_' || p.tparams == nil || n >= len(p.tparams) {
		return p.fail()
	}
	p.i++
	a := p.tparams[n]
	e := a.e
	if a.pack {
		// Inside its expansion, one element at a time (see local); the
		// packs an expansion names have one length.
		if !p.expanding || (p.packLen >= 0 && p.packLen != len(a.elts)) {
			return p.fail()
		}
		p.packLen = len(a.elts)
		if len(a.elts) == 0 {
			return itEntry{tparam: true}
		}
		if p.elem >= len(a.elts) {
			return p.fail()
		}
		e = a.elts[p.elem]
	}
	if e.value || e.s == "" {
		return p.fail() // a value where a type goes
	}
	e.tparam = true
	return e
}

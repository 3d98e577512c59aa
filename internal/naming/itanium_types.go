package naming

import "strings"

// Types and literals, for the fast demangler (itanium.go).

// itIntSuffix are the suffixes of integer literals of these types.
var itIntSuffix = map[string]string{
	"int": "", "unsigned int": "u", "long": "l", "unsigned long": "ul", "long long": "ll", "unsigned long long": "ull",
}

// literal parses L <type> [n] <value> E.
func (p *itParser) literal() string {
	p.i++
	if c := p.peek(); c == '_' || c == 'Z' {
		p.failed = true
		return "" // an external name
	}
	t := p.typ()
	if p.failed {
		return ""
	}
	neg := false
	if p.peek() == 'n' {
		neg = true
		p.i++
	}
	j := strings.IndexByte(p.s[p.i:], 'E')
	if j < 0 {
		p.failed = true
		return ""
	}
	val := p.s[p.i : p.i+j]
	p.i += j + 1
	sign := ""
	if neg {
		sign = "-"
	}
	bt := ""
	if t.builtin {
		bt = t.s
	}
	switch {
	case val == "" && !(bt == "decltype(nullptr)" && !neg):
		p.failed = true
		return ""
	case itIntSuffix[bt] != "" || bt == "int":
		return p.cat(sign, val, itIntSuffix[bt])
	case bt == "bool" && !neg && (val == "0" || val == "1"):
		if val == "1" {
			return "true"
		}
		return "false"
	case bt == "decltype(nullptr)" && (val == "" || val == "0"):
		return bt
	case bt == "double" || bt == "long double" || bt == "float" || bt == "__float128" || bt == "half":
		p.failed = true
		return ""
	}
	return p.cat("(", t.s, ")", sign, val)
}

// itBuiltin are the one-letter builtin types.
var itBuiltin = [256]string{
	'a': "signed char", 'b': "bool", 'c': "char", 'd': "double", 'e': "long double", 'f': "float",
	'g': "__float128", 'h': "unsigned char", 'i': "int", 'j': "unsigned int", 'l': "long",
	'm': "unsigned long", 'n': "__int128", 'o': "unsigned __int128", 's': "short", 't': "unsigned short",
	'v': "void", 'w': "wchar_t", 'x': "long long", 'y': "unsigned long long", 'z': "...",
}

// typ parses a <type>, adding the substitution candidates it makes.
func (p *itParser) typ() itEntry {
	konst := false
	for {
		c := p.peek()
		if c == 'K' && !konst {
			konst = true
			p.i++
			continue
		}
		if c == 'K' || c == 'V' || c == 'r' || c == 'D' && strings.IndexByte("xoOw", p.peek2()) >= 0 {
			return p.fail()
		}
		break
	}
	e := p.unqualifiedType()
	if p.failed {
		return itEntry{}
	}
	if e.s == "" {
		if konst {
			p.add(e) // an empty pack being expanded
		}
		return e
	}
	if konst {
		if e.ref || e.konst || e.composite() {
			return p.fail()
		}
		e = itEntry{s: p.cat(e.s, " const"), konst: true, tparam: e.tparam}
		p.add(e)
	}
	return e
}

// unqualifiedType is typ after its qualifiers.
func (p *itParser) unqualifiedType() itEntry {
	c := p.peek()
	if bt := itBuiltin[c]; bt != "" {
		p.i++
		return itEntry{s: bt, builtin: true}
	}
	var e itEntry
	switch {
	case c == 'N' || isDigitByte(c) || c == 'Z':
		e = p.name(false)
	case c == 'S':
		c2 := p.peek2()
		switch {
		case isDigitByte(c2) || c2 == '_' || isUpperByte(c2):
			e = p.substitution()
			if p.failed || p.peek() != 'I' {
				return e
			}
			e = itEntry{s: p.template(e.s), last: e.last}
		case c2 == 't':
			e = p.name(false)
		default:
			if e = stdAbbrev[c2]; e.s == "" {
				return p.fail()
			}
			p.i += 2
			if p.peek() != 'I' {
				return e
			}
			e = itEntry{s: p.template(e.s), last: e.last}
		}
	case c == 'P' || c == 'R' || c == 'O':
		e = p.pointerType(c)
	case c == 'T':
		e = p.templateParam()
		if p.failed {
			return itEntry{}
		}
		if e.s == "" {
			// An empty pack, inside its expansion: no type, yet a
			// substitution candidate, which the fast path cannot name.
			p.add(e)
			return e
		}
	case c == 'F':
		e = p.functionType()
	case c == 'A':
		e = p.arrayType()
	case c == 'D':
		var bt string
		switch p.peek2() {
		case 'n':
			bt = "decltype(nullptr)"
		case 'i':
			bt = "char32_t"
		case 's':
			bt = "char16_t"
		case 'u':
			bt = "char8_t"
		default:
			return p.fail()
		}
		p.i += 2
		return itEntry{s: bt, builtin: true}
	default:
		return p.fail()
	}
	if p.failed {
		return itEntry{}
	}
	p.add(e)
	return e
}

// pointerType parses a pointer (c is P), lvalue (R) or rvalue reference
// (O) and the type it points or refers to.
func (p *itParser) pointerType(c byte) itEntry {
	p.i++
	b := p.typ()
	switch {
	case p.failed:
		return itEntry{}
	case b.s == "":
		return b // an empty pack being expanded: no type
	case b.ref && b.tparam && c != 'P' && !(c == 'R' && b.rvalue):
		// Reference collapsing, of a template parameter's type: & or &&
		// of T& is T&, && of T&& is T&&.
		return b
	case b.ref || b.noWrap:
		return p.fail() // a reference to a reference, or a declarator in a declarator
	}
	op := "*"
	if c == 'R' {
		op = "&"
	} else if c == 'O' {
		op = "&&"
	}
	switch {
	case b.array:
		return itEntry{s: p.cat(b.left(), " (", op, ") ", b.right()), ref: c != 'P', rvalue: c == 'O', noWrap: true}
	case b.split > 0:
		return itEntry{s: p.cat(b.left(), " (", op, ")", b.right()), ref: c != 'P', rvalue: c == 'O', noWrap: true}
	}
	return itEntry{s: p.cat(b.s, op), ref: c != 'P', rvalue: c == 'O', tparam: b.tparam}
}

// functionType parses F [Y] <return type> <parameter types> E.
func (p *itParser) functionType() itEntry {
	p.i++
	if p.peek() == 'Y' {
		p.i++ // extern "C", which the library does not print
	}
	ret := p.typ()
	if p.failed || ret.composite() || ret.tparam {
		return p.fail()
	}
	params := p.paramTypes(func(c byte) bool {
		// a clone suffix, a ref-qualifier
		return c == '.' || (c == 'R' || c == 'O') && p.peek2() == 'E'
	}, true)
	if p.failed {
		return itEntry{}
	}
	right := p.cat("(", p.join(params, ", "), ")")
	return p.declarator(ret.s, right, false)
}

// arrayType parses A <dimension> _ <element type>.
func (p *itParser) arrayType() itEntry {
	p.i++
	j := p.i
	for isDigitByte(p.peek()) {
		p.i++
	}
	if j == p.i || p.peek() != '_' {
		return p.fail() // no dimension, or an expression
	}
	dim := p.cat("[", p.s[j:p.i], "]")
	p.i++
	elem := p.typ()
	switch {
	case p.failed, elem.tparam:
		return p.fail()
	case elem.array:
		return p.declarator(elem.left(), p.cat(dim, elem.right()), true)
	case elem.composite():
		return p.fail()
	}
	return p.declarator(elem.s, dim, true)
}

// paramTypes parses parameter types up to their E, as the library lists
// them: none for a lone void. bad reports a byte no type may start with
// there; wrapped allows a pointer or reference to a function or an array.
func (p *itParser) paramTypes(bad func(c byte) bool, wrapped bool) []string {
	var params []string
	for p.peek() != 'E' {
		if c := p.peek(); c == 0 || c == 'Q' || bad(c) {
			p.failed = true
			return nil // the end, a requires clause
		}
		t := p.typ()
		if p.failed || t.split > 0 || t.noWrap && !wrapped || t.tparam {
			p.failed = true
			return nil
		}
		params = append(params, t.s)
	}
	p.i++
	if len(params) == 0 {
		p.failed = true
		return nil
	}
	if len(params) == 1 && params[0] == "void" {
		return nil
	}
	return params
}

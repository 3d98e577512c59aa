package dwarf

import (
	"errors"

	"github.com/binscope/binscope/types"
)

// Local is a variable a function declares in its body.
type Local struct {
	Name string
	Type types.Type
	// Nested marks a variable of a block inside the body (pfunct counts
	// only the others).
	Nested bool
}

// Scope is what a function's body declares: its local variables (those
// of nested blocks too, not those of functions inlined into it) and its
// goto labels.
type Scope struct {
	Name   string
	Locals []Local
	Labels int
}

// Scopes lists the scope of every named function definition (the
// abstract one of an inline function too, as pfunct counts them), in
// .debug_info order, read over a scan. Corrupt DWARF gives an error naming
// the file, the section and the offset.
func (f *File) Scopes() (out []Scope, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	de := f.dieEntries(funcWalk)
	de.typed = true
	for {
		e, err := de.next(false)
		if err != nil {
			return nil, f.scanError(de.sc, err)
		}
		if e == nil {
			return out, nil
		}
		if e.Tag != TagSubprogram {
			continue
		}
		children := e.Children
		a, err := de.attrs(e)
		if err != nil {
			return nil, f.scanError(de.sc, err)
		}
		name := a.name.String()
		if a.declaration || name == "" || !children {
			if children {
				if err := de.skipChildren(); err != nil {
					return nil, f.scanError(de.sc, err)
				}
			}
			continue
		}
		s := Scope{Name: name}
		if err := c.scope(de, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

// scanError is err, met by the scan sc: errScan as the *elfx.DecodeError
// naming where the scan lost step.
func (f *File) scanError(sc *scan, err error) error {
	if errors.Is(err, errScan) {
		err = f.scanLost(sc)
	}
	return err
}

// scope reads the children of the function de has just returned into s:
// its variables (name and type) and labels, not those of the functions
// inlined or declared inside it.
func (c *converter) scope(de *dieEntries, s *Scope) error {
	for depth := 1; depth > 0; {
		e, err := de.next(false)
		if err != nil {
			return c.f.scanError(de.sc, err)
		}
		if e == nil {
			return nil
		}
		children := e.Children
		switch e.Tag {
		case 0:
			depth--
			continue
		case TagVariable:
			v, err := de.param(e) // a variable has the attributes of a parameter
			if err != nil {
				return c.f.scanError(de.sc, err)
			}
			if v.typ != 0 {
				t, err := c.typ(v.typ, 0)
				if err != nil {
					return err
				}
				s.Locals = append(s.Locals, Local{Name: v.name, Type: t, Nested: depth > 1})
			}
		case TagLabel:
			s.Labels++
		case TagInlinedSubroutine, TagSubprogram:
			if children {
				if err := de.skipChildren(); err != nil {
					return c.f.scanError(de.sc, err)
				}
			}
			continue
		}
		if children {
			depth++
		}
	}
	return nil
}

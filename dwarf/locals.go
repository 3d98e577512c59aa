package dwarf

import (
	"errors"
	"slices"

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
// .debug_info order, read over a scan. A DIE that does not read loses its
// span of the unit as the other walks do (lost.go): the scopes the span
// holds are left out, the others kept, and Damage says what was lost; a
// local whose type is in what was lost has the type ?.
func (f *File) Scopes() (out []Scope, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	de := f.dieEntries(funcWalk)
	de.typed = true
	var w scopesWalk
	for {
		e, err := de.next(false)
		if err == nil && e != nil {
			err = w.step(c, de, e, &out)
		}
		if errors.Is(err, errScan) {
			if w.lose(f, de, &out) {
				continue
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if e == nil {
			return out, nil
		}
	}
}

// scopesWalk is where Scopes' walk is in a unit: whether each DIE it is in
// is a namespace, and the last child of the unit DIE or of a namespace it
// read (top), with how many DIEs it was in and scopes it had then.
type scopesWalk struct {
	in    []bool
	top   Offset
	depth int
	kept  int
}

// step reads e, the DIE de returned last, into out when it is a named
// function definition.
func (w *scopesWalk) step(c *converter, de *dieEntries, e *Entry, out *[]Scope) error {
	switch e.Tag {
	case 0:
		if len(w.in) > 0 {
			w.in = w.in[:len(w.in)-1]
		}
		return nil
	case TagCompileUnit, TagPartialUnit:
		w.in, w.top = w.in[:0], 0
		return nil
	}
	if !slices.Contains(w.in, false) {
		w.top, w.depth, w.kept = e.Offset, len(w.in), len(*out)
	}
	if e.Tag != TagSubprogram {
		if e.Children {
			w.in = append(w.in, e.Tag == TagNamespace || e.Tag == TagModule)
		}
		return nil
	}
	children := e.Children
	a, err := de.attrs(e)
	if err != nil {
		return err
	}
	name := a.name.String()
	if a.declaration || name == "" || !children {
		if children {
			return de.skipChildren()
		}
		return nil
	}
	s := Scope{Name: name}
	if err := c.scope(de, &s); err != nil {
		return err
	}
	*out = append(*out, s)
	return nil
}

// lose moves de past the span of its unit that holds the DIE it could not
// read, recording the damage; the scopes read since top are dropped when
// the span starts there. false when the units after cannot be found.
func (w *scopesWalk) lose(f *File, de *dieEntries, out *[]Scope) bool {
	sp, lost, ok := f.lose(de.sc, w.top)
	f.damaged(sp.bad, lost)
	if !ok {
		return false
	}
	if sp.from == w.top && sp.to < Offset(de.sc.u.end) {
		*out, w.in = (*out)[:w.kept], w.in[:w.depth] // on at top's sibling
		return true
	}
	if sp.from == w.top {
		*out = (*out)[:w.kept]
	}
	w.in, w.top = w.in[:0], 0 // on at the next unit
	return true
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
			return err
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
				return err
			}
			if v.typ != 0 {
				t, err := c.typ(v.typ, 0)
				if errors.Is(err, errLostRef) {
					t, err = &types.Base{Name: "?"}, nil
				}
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
					return err
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

package dwarf

import (
	"debug/dwarf"

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
// .debug_info order. Corrupt DWARF gives an error naming the file, the
// section and the offset.
func (f *File) Scopes() (out []Scope, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	r := f.Data.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, f.infoError(noOffset, err)
		}
		if e == nil {
			return out, nil
		}
		f.resolveAlt(e)
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		name := str(e, dwarf.AttrName)
		if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl || name == "" || !e.Children {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		s := Scope{Name: name}
		if err := c.scope(r, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

// scope reads the children of the function r has just read into s.
func (c *converter) scope(r *dwarf.Reader, s *Scope) error {
	for depth := 1; depth > 0; {
		e, err := r.Next()
		if err != nil {
			return c.f.infoError(noOffset, err)
		}
		if e == nil {
			return nil
		}
		c.f.resolveAlt(e)
		switch e.Tag {
		case 0:
			depth--
			continue
		case dwarf.TagVariable:
			if off, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
				t, err := c.typ(off, 0)
				if err != nil {
					return err
				}
				s.Locals = append(s.Locals, Local{Name: str(e, dwarf.AttrName), Type: t, Nested: depth > 1})
			}
		case dwarf.TagLabel:
			s.Labels++
		case dwarf.TagInlinedSubroutine, dwarf.TagSubprogram:
			if e.Children {
				r.SkipChildren() // another function's variables
			}
			continue
		}
		if e.Children {
			depth++
		}
	}
	return nil
}

package layout

import (
	"bytes"
	"regexp"

	"github.com/binscope/binscope/types"
)

// sections tracks the access section a C++ class's printout is in, and
// opens a new one ("public:", "protected:", "private:") where a member's
// access differs. The first section is the kind's default (private in a
// class, public in a struct), which needs no label.
type sections struct {
	kind types.Kind
	cur  types.Access
	on   bool // C++: other languages have no access sections
}

// label prints the label of a's section, at the class's own indent, when
// a member of access a opens one.
func (s *sections) label(b *bytes.Buffer, a types.Access, indent int) {
	if !s.on {
		return
	}
	if e := a.Effective(s.kind); e != s.cur {
		s.cur = e
		b.WriteString(tabs(indent) + e.String() + ":\n\n")
	}
}

// methods prints a C++ class's member functions after its data members,
// each as pahole prints one (function__fprintf): "virtual " for a
// virtual one, the return type, the name and the parameter types (the
// artificial this pointer first), " = 0" for a pure virtual one.
func (p *printer) methods(b *bytes.Buffer, l *Layout, access *sections, indent int) {
	t := tabs(indent + 1)
	for i := range l.Type.Methods {
		m := &l.Type.Methods[i]
		b.WriteByte('\n')
		access.label(b, m.Access, indent)
		b.WriteString(t)
		if m.Inline {
			b.WriteString("inline ")
		}
		if m.Virtual {
			b.WriteString("virtual ")
		}
		d := MethodDecl(m, p.lang)
		if p.opts.ClassesAsStructs {
			d = classWord.ReplaceAllString(d, "${1}struct ")
		}
		b.WriteString(d)
		if m.PureVirtual {
			b.WriteString(" = 0")
		}
		b.WriteString(";\n")
	}
}

// classWord is the keyword class in a spelled type.
var classWord = regexp.MustCompile(`(^|[(, ])class `)

// MethodDecl spells a method's return type, name and parameter types as
// pahole does: "void finish(class AgentTimeoutCB *, int)".
func MethodDecl(m *types.Method, lang types.Lang) string {
	return types.PaholeMethod(m.Proto, m.Name, lang)
}

package codegen

import (
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/types"
)

// StubOptions say what WriteStubs writes after the types.
type StubOptions struct {
	// Bodies gives each function a body returning a value of its type,
	// so that the output compiles (pfunct --compile); without it each is
	// a declaration (pfunct -b).
	Bodies bool
	// Header are the header's options.
	Header HeaderOptions
}

// WriteStubs writes the C header of the types fns' prototypes name (what
// their parameters and results point to or hold, defined) and then each
// function's prototype, as pfunct -b and --compile do. A function whose
// language is not C-like is left out.
func WriteStubs(w io.Writer, fns []*types.Func, opts *StubOptions) error {
	var o StubOptions
	if opts != nil {
		o = *opts
	}
	var roots []types.Type
	seen := map[types.Type]bool{}
	add := func(t types.Type) {
		if r := stubRoot(t); r != nil && !seen[r] {
			seen[r] = true
			roots = append(roots, r)
		}
	}
	var picked []*types.Func
	for _, fn := range fns {
		if !fn.Lang.CLike() || fn.SymbolOnly {
			continue
		}
		picked = append(picked, fn)
		add(fn.Return)
		for _, p := range fn.Params {
			add(p.Type)
		}
	}
	spelled, err := WriteHeader(w, roots, &o.Header)
	if err != nil {
		return err
	}
	sp := types.CSpeller{Word: func(t types.Type, inner string) (string, types.Type) {
		if s, ok := spelled[t]; ok {
			return s, nil
		}
		return "", nil
	}, Unprototyped: true}
	var b strings.Builder
	for _, fn := range picked {
		var ps []string
		for _, p := range fn.Params {
			ps = append(ps, sp.Declare(p.Type, CName(p.Name)))
		}
		switch {
		case fn.Variadic && len(ps) > 0:
			ps = append(ps, "...")
		case len(ps) == 0:
			ps = []string{"void"}
		}
		b.WriteString("\n" + sp.Declare(fn.Return, CName(fn.Name)+"("+strings.Join(ps, ", ")+")"))
		if o.Bodies {
			b.WriteString("\n{" + stubReturn(fn.Return, &sp) + "\n}\n")
		} else {
			b.WriteString(";\n")
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// stubRoot is the type a prototype needs defined for t: the struct,
// union, enum or typedef t is or points to; nil for base types.
func stubRoot(t types.Type) types.Type {
	for w := (types.Walk{}); t != nil && w.Enter(t); {
		switch v := t.(type) {
		case *types.Pointer:
			t = v.Target
		case *types.Qualifier:
			t = v.Target
		case *types.Array:
			t = v.Elem
		case *types.Struct, *types.Enum, *types.Typedef:
			return t
		default:
			return nil
		}
	}
	return nil
}

// stubReturn is a body's return statement for a result of type t, as
// pfunct --compile writes it: none for void, a null pointer, 0, or the
// object at address 1 for a struct.
func stubReturn(t types.Type, sp *types.CSpeller) string {
	switch types.Resolve(t).(type) {
	case nil, *types.Void:
		return ""
	case *types.Pointer:
		return "\n\treturn (void *)0;"
	case *types.Struct:
		return fmt.Sprintf("\n\treturn *(%s)1;", sp.Declare(&types.Pointer{Target: t, ByteSize: 8}, ""))
	}
	return "\n\treturn 0;"
}

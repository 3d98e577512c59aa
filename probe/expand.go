package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/binscope/binscope/types"
)

// expand turns $params into one argument per parameter and Go's $retval
// into one per result, and checks that every variable an entry, inline,
// clone or return probe names is a parameter.
func (t *target) expand(d *Def, fn *types.Func) ([]Arg, error) {
	var out []Arg
	var params, results []types.Param
	for _, p := range fn.Params {
		if p.Result {
			results = append(results, p)
		} else {
			params = append(params, p)
		}
	}
	for _, a := range d.Args {
		switch {
		case a.Base == "$params":
			for _, p := range params {
				out = append(out, Arg{Name: p.Name, Expr: p.Name, Base: p.Name, Path: a.Path, Type: a.Type})
			}
			for _, name := range t.mirArgs(fn) {
				out = append(out, Arg{Name: name, Expr: name, Base: name, Path: a.Path, Type: a.Type})
			}
		case a.Base == "$retval" && fn.Lang == types.LangGo && len(results) > 1 && len(a.Path) == 0:
			for i, p := range results {
				out = append(out, Arg{Name: resultName(p, i), Expr: a.Expr, Base: fmt.Sprintf("$retval#%d", i), Type: a.Type})
			}
		case retvalN(a.Base) >= 0:
			i := retvalN(a.Base)
			if fn.Lang == types.LangGo && len(fn.Params) > 0 || i > 0 {
				if i >= len(results) {
					return nil, fmt.Errorf("%s: %s has %d results: $retval0 to $retval%d", d.Text, fn.Name, len(results), max(len(results)-1, 0))
				}
				a.Base = fmt.Sprintf("$retval#%d", i)
			} else {
				a.Base = "$retval"
			}
			out = append(out, a)
		case strings.HasPrefix(a.Base, "$") && a.Base != "$retval" && !IsBuiltin(a.Base):
			return nil, fmt.Errorf("%s: unknown %s (use $params, $retval, $retvalN, a parameter, a variable, %%REG or a builtin: %s)", d.Text, a.Base, builtinNames())
		case strings.HasPrefix(a.Base, "$") || strings.HasPrefix(a.Base, "%"):
			out = append(out, a)
		default:
			if i := resultNamed(results, a.Base); d.Return && i >= 0 && !isParam(params, a.Base) {
				a.Base = fmt.Sprintf("$retval#%d", i)
				out = append(out, a)
				continue
			}
			if d.Line == 0 && d.Offset == 0 {
				found := false
				var names []string
				for _, p := range params {
					found = found || p.Name == a.Base
					names = append(names, p.Name)
				}
				if !found {
					found = slices.Contains(t.mirArgs(fn), a.Base)
				}
				if !found {
					_, found = t.global(fn.LowPC, a.Base)
				}
				if !found && len(fn.Params) == 0 && fn.Decl.File == "" {
					none := "has no debug info for " + fn.Name
					if fn.LostDIE != 0 {
						none = fmt.Sprintf("lost the debug info of %s with the unreadable DIE at %#x", fn.Name, fn.LostDIE)
					}
					return nil, fmt.Errorf("%s: %s %s, so no parameter names: read registers (%s for C; %s for Go) or $retval", d.Text, t.path, none, regList(t.arch.CIntRegs), regList(t.arch.GoIntRegs[:min(5, len(t.arch.GoIntRegs))]))
				}
				if !found {
					return nil, t.noParam(d, fn, a.Base, names, results)
				}
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// Types returns the named types the definitions' arguments start from
// (through pointers): what a generated program's header should define.
func (r *Resolver) Types(defs []*Def) []types.Type {
	seen := map[types.Type]bool{}
	var out []types.Type
	for _, d := range defs {
		if d.Func == "" || r.t.f == nil && r.t.model == nil {
			continue // a USDT probe's or a line's arguments have no named types
		}
		fn, err := r.t.lookup(d.Func)
		if err != nil {
			continue
		}
		if fn, err = r.t.params(fn); err != nil {
			continue
		}
		for _, p := range fn.Params {
			if !used(d, p.Name) {
				continue
			}
			t := p.Type
			for i := 0; i < types.MaxDepth; i++ {
				ptr, ok := types.Resolve(t).(*types.Pointer)
				if !ok {
					break
				}
				t = ptr.Target
			}
			if s, ok := types.Resolve(t).(*types.Struct); ok && s.Name != "" && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// regList spells registers as definitions name them: "%rdi, %rsi".
func regList(regs []string) string {
	var out []string
	for _, r := range regs {
		out = append(out, "%"+strings.ToLower(r))
	}
	return strings.Join(out, ", ")
}

// mirSites bounds the expansions mirArgs reads.
const mirSites = 8

// mirArgs are the arguments rustc's MIR inliner made locals of fn's body
// with no parameter DIE anywhere, not even in the function's abstract
// entry (rust-O3 seed 7044: fn09's c, a variable declared on fn09's line
// with the value of each expansion's call; gdb prints it): the variables
// of fn's expansions declared on its line that no parameter names, in
// the order the first expansions holding them list them. See
// inlineParams, which reads them at each site.
func (t *target) mirArgs(fn *types.Func) []string {
	if fn.Lang != types.LangRust || fn.Decl.Line == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, p := range fn.Params {
		have[p.Name] = true
	}
	var out []string
	for i, in := range fn.Inlined {
		if i >= mirSites {
			break
		}
		vars, err := t.varsAt(in.EntryPC)
		if err != nil {
			continue
		}
		for _, v := range vars {
			if !v.Param && v.Inline == fn.Name && v.DeclLine == fn.Decl.Line && !have[v.Name] {
				have[v.Name] = true
				out = append(out, v.Name)
			}
		}
	}
	return out
}

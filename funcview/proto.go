// Package funcview is the functions view of the model of code: prototypes in
// each language's own syntax (Prototype, spelled by package types) with
// each parameter's location at entry (Locations), the source lines of a
// function with the addresses that carry them (WriteLines, as perf probe
// -L), and pfunct's queries and statistics (InlineStats, HasInlineDecl,
// TakesPointerTo). It reads only package types: the functions come from
// package code.
package funcview

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/types"
)

// Prototype spells fn's signature in its language:
//
//	Go:   func (c *counter) Add(v float64)
//	Rust: fn layouts::sum(a: u32, b: &str) -> u64
//	Zig:  fn layouts.sum(a: u32, b: []const u8) u64
//	C:    int work(int n)
//
// Go types of fn's own package lose their package qualifier, as they are
// written in its source.
func Prototype(fn *types.Func) string { return prototype(fn, "") }

// prototype is Prototype followed by tail.
func prototype(fn *types.Func, tail string) string {
	var ins []types.Param
	var outs []types.Param
	for _, p := range fn.Params {
		if p.Result {
			outs = append(outs, p)
		} else {
			ins = append(ins, p)
		}
	}
	var b strings.Builder
	switch {
	case fn.SymbolOnly:
		// Only a symbol names it (its DIE, when LostDIE says so, may be
		// among those a reader lost): its return and parameters unknown.
		b.WriteString("? " + fn.Name + "(?)")
	case fn.Lang == types.LangGo:
		goPrototype(&b, fn, ins, outs)
	case fn.Lang == types.LangRust, fn.Lang == types.LangZig:
		rustZigPrototype(&b, fn, ins)
	default:
		cPrototype(&b, fn, ins)
	}
	b.WriteString(tail)
	return b.String()
}

// native spells t in fn's language; in Go, without the package of fn.
func native(fn *types.Func, t types.Type) string {
	s := types.Spell(t, fn.Lang, types.SyntaxNative)
	if fn.Lang == types.LangGo {
		if pkg := GoPackage(fn.Name); pkg != "" {
			s = strings.ReplaceAll(s, pkg+".", "")
		}
	}
	return s
}

// goPrototype writes fn as a Go func: a method with its receiver, results
// named where one is.
func goPrototype(b *strings.Builder, fn *types.Func, ins, outs []types.Param) {
	b.WriteString("func ")
	name := fn.Name
	if recv, method, ok := goMethod(fn.Name); ok && len(ins) > 0 {
		b.WriteString("(" + goParam(ins[0].Name) + " " + recv + ") ")
		name = method
		ins = ins[1:]
	}
	b.WriteString(name + "(")
	for i, p := range ins {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(goParam(p.Name) + " " + native(fn, p.Type))
	}
	b.WriteString(")")
	named := false
	for _, p := range outs {
		named = named || !strings.HasPrefix(p.Name, "~")
	}
	switch {
	case len(outs) == 1 && !named:
		b.WriteString(" " + native(fn, outs[0].Type))
	case len(outs) > 0:
		b.WriteString(" (")
		for i, p := range outs {
			if i > 0 {
				b.WriteString(", ")
			}
			if named {
				b.WriteString(goParam(p.Name) + " ")
			}
			b.WriteString(native(fn, p.Type))
		}
		b.WriteString(")")
	}
}

// rustZigPrototype writes fn as a Rust or Zig fn.
func rustZigPrototype(b *strings.Builder, fn *types.Func, ins []types.Param) {
	b.WriteString("fn " + fn.Name + "(")
	for i, p := range ins {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name + ": " + native(fn, p.Type))
	}
	b.WriteString(")")
	if fn.Return != nil {
		if fn.Lang == types.LangRust {
			b.WriteString(" ->")
		}
		b.WriteString(" " + native(fn, fn.Return))
	} else if fn.Lang == types.LangZig {
		b.WriteString(" void")
	}
}

// cPrototype writes fn as a C declarator, (void) for no parameters.
func cPrototype(b *strings.Builder, fn *types.Func, ins []types.Param) {
	b.WriteString(types.Declare(fn.Return, fn.Name))
	b.WriteByte('(')
	if len(ins) == 0 && !fn.Variadic {
		b.WriteString("void")
	}
	for i, p := range ins {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.Declare(p.Type, p.Name))
	}
	if fn.Variadic {
		if len(ins) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteString(")")
}

// goParam spells a Go parameter name: the compiler calls unnamed ones ~pN
// or ~rN, and blank ones ~bN.
func goParam(name string) string {
	if name == "" || strings.HasPrefix(name, "~") {
		return "_"
	}
	return name
}

// GoPackage returns the package path of a Go symbol name:
// "github.com/prometheus/client_golang/prometheus" for
// "github.com/prometheus/client_golang/prometheus.(*counter).Add".
func GoPackage(name string) string {
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return name[:slash+1+dot]
}

// goMethod splits a Go method name into receiver type and method:
// "pkg.(*T).M" gives "*T", "M"; "pkg.T.M" gives "T", "M". Closures
// (pkg.f.func1) and generic instances' shapes are not methods.
func goMethod(name string) (recv, method string, ok bool) {
	pkg := GoPackage(name)
	if pkg == "" {
		return "", "", false
	}
	rest := name[len(pkg)+1:]
	depth := 0
	last := -1
	for i, c := range rest {
		switch c {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '.':
			if depth == 0 {
				last = i
			}
		}
	}
	if last < 0 {
		return "", "", false
	}
	recv, method = rest[:last], rest[last+1:]
	if strings.Contains(recv, ".") && !strings.HasPrefix(recv, "(") {
		return "", "", false // a closure of a method or of a function
	}
	if strings.HasPrefix(method, "func") || strings.HasPrefix(method, "gowrap") || strings.HasPrefix(method, "deferwrap") {
		return "", "", false
	}
	recv = strings.TrimSuffix(strings.TrimPrefix(recv, "("), ")")
	return recv, method, true
}

// Locations spells where each parameter is at entry: "a: RDI, b: RSI";
// a value that holds only after the prologue says from where:
// "a: [CFA-20] from +0xb". Results are left out.
func Locations(fn *types.Func) string {
	var parts []string
	for _, p := range fn.Params {
		if p.Result {
			continue
		}
		s := goParam(p.Name) + ": " + p.Loc.String()
		if p.PC > fn.LowPC && len(p.Loc.Pieces) > 0 {
			s += fmt.Sprintf(" from +%#x", p.PC-fn.LowPC)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// PfunctLine is fn's line in pfunct -P for C and C++: pahole's spelling of
// the prototype (function__fprintf), "inline " first for a function
// declared inline, ";" last:
//
//	inline int sq(int x);
//	int main(int argc, char * * argv);
//	int st(const char  * fmt, ...);
//
// Go, Rust and Zig functions are their Prototype: pfunct spells them as C.
func PfunctLine(fn *types.Func) string {
	if !fn.Lang.CLike() {
		return Prototype(fn)
	}
	proto := &types.FuncProto{Return: fn.Return, Variadic: fn.Variadic}
	if b, ok := fn.Return.(*types.Base); ok && b.Name == "" && b.ByteSize == 0 {
		// DWARF's unspecified type (an assembler's functions return
		// one): pahole spells it as a qualifier of void, "void ".
		proto.Return = &types.Base{Name: "void "}
	}
	for _, p := range fn.Params {
		if !p.Result {
			proto.Params = append(proto.Params, types.FuncParam{Name: p.Name, Type: p.Type})
		}
	}
	s := types.PaholeMethod(proto, fn.Name, fn.Lang) + ";"
	if fn.DeclaredInline {
		s = "inline " + s
	}
	return s
}

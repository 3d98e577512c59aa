package probe

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// retvalN is N for "$retvalN" (a function's result N, from 0), or -1.
func retvalN(base string) int {
	rest, ok := strings.CutPrefix(base, "$retval")
	if !ok || rest == "" || len(rest) > 3 {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || rest[0] == '+' || len(rest) > 1 && rest[0] == '0' {
		return -1
	}
	return n
}

// resultName is how result i prints and may be named at %return: its name
// in the source, or rI for an unnamed one (Go's DWARF calls it ~rI).
func resultName(p types.Param, i int) string {
	if p.Name == "" || p.Name[0] == '~' {
		return fmt.Sprintf("r%d", i)
	}
	return p.Name
}

// resultNamed is the index of the result named name (see resultName), or -1.
func resultNamed(results []types.Param, name string) int {
	for i, p := range results {
		if resultName(p, i) == name || p.Name == name {
			return i
		}
	}
	return -1
}

func isParam(params []types.Param, name string) bool {
	for _, p := range params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// noParam is the error for a name that is no parameter of fn: the
// closest names, and results a %return probe could read.
func (t *target) noParam(d *Def, fn *types.Func, name string, params []string, results []types.Param) error {
	all := append([]string{}, params...)
	var rs []string
	for i, p := range results {
		rs = append(rs, resultName(p, i))
	}
	if d.Return {
		all = append(all, rs...)
	}
	if !d.Return && resultNamed(results, name) >= 0 {
		return fmt.Errorf("%s: %s is a result of %s: read it at %s%%return", d.Text, name, fn.Name, fn.Name)
	}
	var say []string
	if near := types.Closest(all, name, 3); len(near) > 0 {
		say = append(say, "closest: "+strings.Join(near, ", "))
	}
	say = append(say, "parameters: "+strings.Join(params, ", "))
	if d.Return && len(rs) > 0 {
		say = append(say, "results: "+strings.Join(rs, ", "))
	}
	return fmt.Errorf("%s: %s has no parameter %s (%s)", d.Text, fn.Name, name, strings.Join(say, "; "))
}

// itabs are the dynamic types of the Go interface type typ that the symbol
// table names (the linker's go:itab.TYPE,IFACE symbols), by itab address.
func (t *target) itabs(typ types.Type) []spec.Dynamic {
	name := types.TypeString(typ)
	if t.f == nil || name == "" {
		return nil
	}
	var out []spec.Dynamic
	for _, sy := range symtab.Objects(t.f.ELF) {
		rest, ok := strings.CutPrefix(sy.Name, "go:itab.")
		if !ok {
			continue
		}
		if dyn, ok := strings.CutSuffix(rest, ","+name); ok {
			out = append(out, spec.Dynamic{Itab: sy.Addr, Name: dyn})
		}
	}
	return out
}

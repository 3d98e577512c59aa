package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/spec"
)

// builtins are the values any probe reads whatever it probes, as
// bpftrace's pid, tid, comm, cpu, nsecs and uid: the process and thread
// ids (as the root pid namespace numbers them, as events print them), the
// thread's name (16 bytes, comm), the CPU, the time (CLOCK_MONOTONIC
// nanoseconds, the events' clock) and the user and group ids. Their
// fetch types; a number may be given another (:x32).
var builtins = map[string]string{
	"$pid": "u32", "$tid": "u32", "$uid": "u32", "$gid": "u32",
	"$cpu": "u32", "$ts": "u64", "$comm": "chars",
}

// CommSize is the bytes of a thread's name ($comm), its NUL included.
const CommSize = 16

// IsBuiltin reports whether base names a builtin ($pid, $comm...).
func IsBuiltin(base string) bool {
	_, ok := builtins[base]
	return ok
}

// builtinNames lists the builtins for messages.
func builtinNames() string {
	var out []string
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// builtinFetch is how a site reads a builtin.
func builtinFetch(a Arg) (spec.Fetch, error) {
	typ := builtins[a.Base]
	if len(a.Path) > 0 {
		return spec.Fetch{}, fmt.Errorf("%s: %s is a value of its own; it has no fields", a.Expr, a.Base)
	}
	f := spec.Fetch{Name: a.Name, Type: typ, Chains: []spec.Chain{{Builtin: a.Base[1:]}}}
	switch {
	case typ == "chars":
		if a.Type != "" && a.Type != "string" {
			return spec.Fetch{}, fmt.Errorf("%s is text: no type but :string", a.Base)
		}
		f.Size = CommSize
		return f, nil
	case a.Type == "string" || a.Type == "bytes":
		return spec.Fetch{}, fmt.Errorf("%s is a number: give a number type (:x32, :u64)", a.Base)
	case a.Type != "":
		f.Type = a.Type
	}
	f.Size = typeSize(f.Type)
	return f, nil
}

package probe

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/tracepoint"
)

var tracepointName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*$`)

// otherKernelEvents are the probe kinds other tools take that goprobe does
// not attach, and what works instead.
var otherKernelEvents = map[string]string{
	"kprobe":     "kprobes need a kernel built with CONFIG_KPROBE_EVENTS; use the tracepoint that fires there (GROUP:NAME from /sys/kernel/tracing/available_events), e.g. syscalls:sys_enter_connect",
	"kretprobe":  "kprobes need a kernel built with CONFIG_KPROBE_EVENTS; use a syscalls:sys_exit_* or another tracepoint",
	"fentry":     "fentry programs need BPF trampolines, which this kernel refuses; use a tracepoint (GROUP:NAME)",
	"fexit":      "fexit programs need BPF trampolines, which this kernel refuses; use a tracepoint (GROUP:NAME)",
	"tracepoint": "write the tracepoint as GROUP:NAME, without the tracepoint: prefix",
}

// KernelEvent reports whether a definition names a kernel event rather
// than a function: GROUP:NAME (a tracepoint, when tracefs has it) or one
// of the kinds goprobe cannot attach here (kprobe:, fentry:...), which is
// an error saying what works instead.
func KernelEvent(def string) (bool, error) {
	point, _, _ := strings.Cut(strings.TrimSpace(def), " ")
	if kind, _, ok := strings.Cut(point, ":"); ok {
		if why, known := otherKernelEvents[kind]; known {
			return true, fmt.Errorf("%s: %s", point, why)
		}
	}
	if !tracepointName.MatchString(point) {
		return false, nil
	}
	dir, err := tracepoint.Dir()
	if err != nil {
		return false, nil // then it is a function and line, or an error there
	}
	group, name, _ := tracepoint.Split(point)
	if _, err := tracepoint.Read(dir, group, name); err != nil {
		return false, nil
	}
	return true, nil
}

// TracepointProbe resolves a tracepoint definition, "GROUP:NAME ARG...",
// each ARG being [NAME=]FIELD[:TYPE] (FIELD also as args->FIELD or
// args.FIELD, as bpftrace writes it) or $fields for every field. A field's
// type comes from its C declaration (a syscall's `int fd` is an int though
// the record gives it 8 bytes); a char * of a syscall is the user's string,
// a char array the text it holds. A field this cannot read (a __data_loc
// array) is a Fetch with Unavailable set. Builtins ($pid, $comm...) are
// read as at any probe; a /PRED/ after GROUP:NAME, and all when not nil,
// filter the hits (see Filter) on fields and builtins.
func TracepointProbe(def string, all *Filter) (spec.Probe, error) {
	def, pred, err := cutPredicate(def)
	if err != nil {
		return spec.Probe{}, err
	}
	var flt *Filter
	if pred != "" {
		if flt, err = ParseFilter(pred); err != nil {
			return spec.Probe{}, err
		}
	}
	flt = flt.And(all)
	fields := strings.Fields(def)
	if len(fields) == 0 {
		return spec.Probe{}, fmt.Errorf("%w: empty", ErrBadDef)
	}
	group, name, ok := tracepoint.Split(fields[0])
	if !ok {
		return spec.Probe{}, fmt.Errorf("%w %q: not GROUP:NAME", ErrBadDef, fields[0])
	}
	dir, err := tracepoint.Dir()
	if err != nil {
		return spec.Probe{}, err
	}
	ev, err := tracepoint.Read(dir, group, name)
	if err != nil {
		return spec.Probe{}, err
	}
	site := spec.Site{Kind: spec.SiteTracepoint, Function: group + ":" + name}
	for _, a := range fields[1:] {
		if a == "$fields" {
			for _, f := range ev.Fields {
				site.Args = append(site.Args, fieldFetch(f.Name, f, "", group))
			}
			continue
		}
		if arg, err := parseArg(a); err == nil && IsBuiltin(arg.Base) {
			f, err := builtinFetch(arg)
			if err != nil {
				return spec.Probe{}, fmt.Errorf("%w %q: %v", ErrBadDef, def, err)
			}
			site.Args = append(site.Args, f)
			continue
		}
		as, field, typ := a, a, ""
		if n, rest, ok := strings.Cut(a, "="); ok {
			as, field = n, rest
		}
		if i := strings.LastIndexByte(field, ':'); i > 0 {
			field, typ = field[:i], field[i+1:]
			if !ArgTypes[typ] && typ != "cstring" {
				return spec.Probe{}, fmt.Errorf("%w %q: type %q: want u8..u64, s8..s64, x8..x64, string or bytes", ErrBadDef, def, typ)
			}
		}
		field = strings.TrimPrefix(strings.TrimPrefix(field, "args->"), "args.")
		if as == a {
			as = field
		}
		f, ok := ev.Field(field)
		if !ok {
			return spec.Probe{}, fmt.Errorf("%w %q: %s:%s has no field %q (fields: %s)", ErrBadDef, def, group, name, field, strings.Join(ev.FieldNames(), ", "))
		}
		site.Args = append(site.Args, fieldFetch(as, f, typ, group))
	}
	if len(site.Args) > spec.MaxArgs {
		return spec.Probe{}, fmt.Errorf("%w %q: %d arguments: at most %d", ErrBadDef, def, len(site.Args), spec.MaxArgs)
	}
	text := strings.Join(fields, " ")
	if pred != "" {
		text = strings.Join(append([]string{fields[0], "/" + strings.TrimSpace(pred) + "/"}, fields[1:]...), " ")
	}
	if flt != nil {
		if site.Filter, err = tracepointFilter(text, flt, ev, group); err != nil {
			return spec.Probe{}, err
		}
	}
	return spec.Probe{Def: text, Function: site.Function, Lang: "c", Sites: []spec.Site{site}}, nil
}

// tracepointFilter reads a filter's operands from the event's record
// (FIELD, args->FIELD, args.FIELD) or as builtins.
func tracepointFilter(def string, flt *Filter, ev *tracepoint.Event, group string) (*spec.Filter, error) {
	out := &spec.Filter{Text: flt.Text, Code: flt.Code}
	for k, a := range flt.Operands {
		var f spec.Fetch
		if IsBuiltin(a.Base) {
			var err error
			if f, err = builtinFetch(a); err != nil {
				return nil, fmt.Errorf("%w %q: %v", ErrBadDef, def, err)
			}
		} else {
			name := strings.TrimPrefix(strings.TrimPrefix(a.Expr, "args->"), "args.")
			field, ok := ev.Field(name)
			if !ok {
				return nil, fmt.Errorf("%w %q: filter operand %s: the event has no field %q (fields: %s)", ErrBadDef, def, a.Expr, name, strings.Join(ev.FieldNames(), ", "))
			}
			f = fieldFetch(a.Expr, field, a.Type, group)
			if c := f.Chains; len(c) > 0 && c[0].Field != nil && c[0].Field.Text {
				return nil, fmt.Errorf("%w %q: filter operand %s: text held in the record is not compared yet (a syscall's string argument is)", ErrBadDef, def, a.Expr)
			}
		}
		if err := checkOperand(def, flt, &f, k); err != nil {
			return nil, err
		}
		out.Operands = append(out.Operands, f)
	}
	return out, nil
}

// fieldFetch reads field f of a tracepoint's record as typ ("" from its
// declaration).
func fieldFetch(name string, f tracepoint.Field, typ, group string) spec.Fetch {
	out := spec.Fetch{Name: name}
	at := &spec.CtxField{Offset: int16(f.Offset), Size: f.Size}
	if f.DataLoc {
		if !f.Text() || typ != "" && typ != "string" && typ != "cstring" {
			out.Type, out.Unavailable = "x32", fmt.Sprintf("a __data_loc %s: only character data is read", f.Decl)
			return out
		}
		// The u32 at Offset locates the text in the record.
		at.Size, at.Text, at.DataLoc = 4, true, true
		out.Type, out.Size, out.Chains = "cstring", spec.StringMax, []spec.Chain{{Field: at}}
		return out
	}
	switch {
	case f.Text() && (typ == "" || typ == "string" || typ == "cstring"):
		out.Type, out.Size = "cstring", int64(min(f.Size, spec.StringMax))
		at.Size, at.Text = min(f.Size, spec.StringMax), true
		out.Chains = []spec.Chain{{Field: at}}
		return out
	case f.Pointer() && strings.Contains(f.Decl, "char") && group == "syscalls" && (typ == "" || typ == "string" || typ == "cstring"):
		// A syscall's string argument, in the caller's memory.
		out.Type, out.Size = "cstring", 8
		at.Size = 8
		out.Chains = []spec.Chain{{Field: at}}
		return out
	}
	size, signed, known := f.Width()
	if !known {
		size, signed = f.Size, f.Signed
	}
	if size > 8 || f.Elem != 0 {
		out.Type, out.Unavailable = "x64", fmt.Sprintf("a %d-byte %s: give a scalar field", f.Size, f.Decl)
		return out
	}
	at.Size = size
	switch {
	case typ != "" && typ != "string" && typ != "cstring":
		out.Type = typ
	case f.Pointer():
		out.Type = "x64"
	case signed:
		out.Type = fmt.Sprintf("s%d", 8*size)
	default:
		out.Type = fmt.Sprintf("u%d", 8*size)
	}
	out.Size = int64(size)
	out.Chains = []spec.Chain{{Field: at}}
	return out
}

// TracepointSpec is a spec holding only tracepoint probes: for a run with
// no function probes.
func TracepointSpec() *spec.Spec {
	return &spec.Spec{Version: spec.SpecVersion, Arch: arch.HostName()}
}

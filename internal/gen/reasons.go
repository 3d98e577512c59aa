package gen

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// specArg is what the harness reads of a fetch in goprobe's spec.
type specArg struct {
	Name        string
	Unavailable string
	Fails       string // why a hit may print ? where the chains read others
	Chains      []struct {
		Expr []any
	}
}

// argInfo is how a site reads one argument: unavailable is why a ? at
// the site is one (spec.Fetch's Unavailable, else its Fails).
type argInfo struct {
	unavailable string
	expr        bool // through a DWARF expression
}

// noteArgs keeps how the site at addr reads each argument.
func (fr *FuncResult) noteArgs(addr uint64, args []specArg) {
	if fr.args == nil {
		fr.args = map[string]argInfo{}
	}
	for _, a := range args {
		in := argInfo{unavailable: cmp.Or(a.Unavailable, a.Fails)}
		for _, c := range a.Chains {
			in.expr = in.expr || len(c.Expr) > 0
		}
		fr.args[fmt.Sprintf("%#x %s", addr, a.Name)] = in
	}
}

// noteAbsent counts a parameter an event at addr left out as a ? there,
// with that reason when the spec gave the site none for it.
func (fr *FuncResult) noteAbsent(addr, name string, call int) {
	if a, err := strconv.ParseUint(addr, 0, 64); err == nil {
		key := fmt.Sprintf("%#x %s", a, name)
		if in := fr.args[key]; in.unavailable == "" {
			if fr.args == nil {
				fr.args = map[string]argInfo{}
			}
			in.unavailable = "left out of the event (goprobe printed no such argument)"
			fr.args[key] = in
		}
	}
	fr.noteValue(addr, name, nil, call)
}

// noteValue counts a value printed at the site at addr (goprobe's "0x...")
// in the function's call-th call: read through an expression, or ? for
// the reason the spec gave.
func (fr *FuncResult) noteValue(addr, name string, v any, call int) {
	a, err := strconv.ParseUint(addr, 0, 64)
	if err != nil {
		return
	}
	key := fmt.Sprintf("%#x %s", a, name)
	in := fr.args[key]
	_, ok := number(v)
	if fr.unreadHit == nil {
		fr.unreadHit = map[string][]int{}
	}
	hit := -1
	if !ok {
		hit = call
	}
	fr.unreadHit[key] = append(fr.unreadHit[key], hit)
	if ok {
		if in.expr {
			fr.ExprValues++
		}
		if fr.ReadArgs == nil {
			fr.ReadArgs = map[string]int{}
		}
		fr.ReadArgs[name]++
		return
	}
	if fr.Unread == nil {
		fr.Unread = map[string]int{}
	}
	class := ReasonClass(in.unavailable)
	if class == ReasonNoLocation && fr.unused[name] {
		class = ReasonUnused
	}
	fr.Unread[class]++
	if fr.UnreadAt == nil {
		fr.UnreadAt = map[string]int{}
	}
	fr.UnreadAt[fmt.Sprintf("%#x %s: %s", a, name, in.unavailable)]++
}

// WriteUnread prints, per function, each site's arguments printed as ?,
// how often and why: what the reasons table sums.
func WriteUnread(w io.Writer, rs []*Result) {
	for _, r := range rs {
		for _, fr := range r.Funcs {
			keys := make([]string, 0, len(fr.UnreadAt))
			for k := range fr.UnreadAt {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "%s seed=%d %s kind=%s shape=%s: %d× %s\n", r.Build, r.Seed, fr.Symbol, fr.Kind, fr.Shape, fr.UnreadAt[k], k)
			}
		}
	}
}

// Reason classes of the values printed as ?.
const (
	ReasonNoLocation = "no location"           // the debug info gives none where a probe can read it
	ReasonUnused     = "unused"                // no location, and the function does not use the parameter: no code of it holds the value
	ReasonConstant   = "one constant, several" // one DIE for several calls (unrolled copies)
	ReasonWrongDebug = "contradicts the code"  // an expression the code computes otherwise
	ReasonFault      = "fault"                 // readable by the spec, not when run
	ReasonOther      = "other"
)

// ReasonClass sorts the reason goprobe gives for an unreadable argument:
// the debug info has no location for it (not at the site, nor anywhere
// later that every call passes once, nor at the callers), a constant
// shared by several calls, or another reason. "" is a value the spec
// reads that faulted when read.
func ReasonClass(why string) string {
	switch {
	case why == "":
		return ReasonFault
	case strings.Contains(why, "is not available here"), strings.Contains(why, "optimized out here"),
		strings.Contains(why, "none of the"), strings.Contains(why, "no call in the unit calls"):
		return ReasonNoLocation
	case strings.Contains(why, "one constant for the whole expansion"):
		return ReasonConstant
	case strings.Contains(why, "an operation is left out"), strings.Contains(why, "two values were given one place"),
		strings.Contains(why, "the code computes it otherwise"):
		return ReasonWrongDebug
	}
	return ReasonOther
}

// WriteReasons prints, per build, the argument values read through DWARF
// expressions and the ? by reason, as shares of the values printed.
func WriteReasons(w io.Writer, rs []*Result) {
	type sum struct {
		values, expr int
		unread       map[string]int
	}
	by := map[string]*sum{}
	for _, r := range rs {
		s := by[r.Build]
		if s == nil {
			s = &sum{unread: map[string]int{}}
			by[r.Build] = s
		}
		for _, fr := range r.Funcs {
			s.values += fr.Values
			s.expr += fr.ExprValues
			for k, n := range fr.Unread {
				s.unread[k] += n
			}
		}
	}
	fmt.Fprintln(w, "| build | values | read through an expression | `?`: no location in the debug info | `?`: no location, an unused parameter | `?`: one constant for a DIE of several calls | `?`: debug info the code contradicts | `?`: other | `?`: fault |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var names []string
	for _, b := range Builds {
		if by[b.Name] != nil {
			names = append(names, b.Name)
		}
	}
	for _, b := range names {
		s := by[b]
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", b, s.values, pct(s.expr, s.values),
			pct(s.unread[ReasonNoLocation], s.values), pct(s.unread[ReasonUnused], s.values), pct(s.unread[ReasonConstant], s.values), pct(s.unread[ReasonWrongDebug], s.values),
			pct(s.unread[ReasonOther], s.values), pct(s.unread[ReasonFault], s.values))
	}
}

package gen

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Tools are the probing tools a run uses: goprobe's path, and whether to
// count with the peers.
type Tools struct {
	Goprobe  string
	Perf     bool
	Bpftrace bool
}

// FuncResult is one function of one program: what it recorded and what
// each tool saw. A count of -1 means the tool could not probe it.
type FuncResult struct {
	Func   string // the source name, fn03
	Symbol string // the probe definition's name, main.fn03
	Kind   Kind   // the shape its source asks for
	Shape  string // what the binary holds: entry, inline, clone, split, joined with +
	Sites  string // goprobe's sites: kind@addr, ...
	Want   int    // calls the program recorded

	Goprobe    int    // goprobe stat's count
	GoprobeErr string // why goprobe could not probe it
	Trace      int    // goprobe trace's events
	TraceWant  int    // calls recorded in the trace run
	Values     int    // argument values printed
	Wrong      int    // printed values that no call passed
	Surplus    int    // printed values some call passed, more often than passed (a call seen twice)
	Unreadable int    // values printed as ?
	WrongEx    string // an example of a wrong value
	// ExprValues are the values read through a DWARF expression (the
	// caller's x*3+1 passed to an inlined callee); Unread counts the ?
	// by why the spec says the site cannot read them (see reasons.go).
	ExprValues int
	Unread     map[string]int
	// UnreadAt counts the ? per site, argument and reason.
	UnreadAt map[string]int
	// ReadArgs counts the values printed as numbers, per argument.
	ReadArgs map[string]int
	// CallWrong counts the printed values that are not their own call's
	// (see compareCalls), WrongAt them per "addr argument".
	CallWrong int
	WrongAt   map[string]int
	// Reordered counts the events paired with another call than their
	// rank (see callPairing): a site that fires before an earlier call's.
	Reordered int
	wrongAtEx []string // per "addr argument", its first, in order
	read      []readValue
	args      map[string]argInfo // by "addr name", from the spec
	// unreadHit says, per "addr name", for each pass of the trace's run
	// through the site in order, the function's call it was (0 for the
	// first event of the function) when the value was ?, else -1.
	unreadHit map[string][]int
	unused    map[string]bool // the parameters the function does not use

	Perf     int
	Bpftrace int
}

// Result is one program built one way.
type Result struct {
	Seed  int64
	Build string
	Bin   string
	Dir   string // where it was built and its records written
	N     int    // how many times main called each root
	Funcs []*FuncResult
	// Steps is the wall time of each step of the run (build, run,
	// sites, stat, trace, perf, bpftrace, gdb), for a batch's account of
	// where its time goes.
	Steps map[string]time.Duration
}

// step adds the time since t0 to step name and returns now.
func (r *Result) step(name string, t0 time.Time) time.Time {
	now := time.Now()
	if r.Steps == nil {
		r.Steps = map[string]time.Duration{}
	}
	r.Steps[name] += now.Sub(t0)
	return now
}

// Run builds p with b in dir, runs it with n under each tool and compares
// what they saw with its record.
func Run(p *Program, b Build, dir string, n int, t Tools) (*Result, error) {
	t0 := time.Now()
	bin, err := b.Make(p, dir)
	if err != nil {
		return nil, err
	}
	res := &Result{Seed: p.Seed, Build: b.Name, Bin: bin, Dir: dir, N: n}
	t0 = res.step("build", t0)
	nargs := []string{strconv.Itoa(n)}
	base, err := runRecord(bin, dir, "base", nargs)
	if err != nil {
		return nil, err
	}
	t0 = res.step("run", t0)
	byDef := map[string]*FuncResult{}
	var defs []string
	for _, f := range p.Funcs {
		fr := &FuncResult{Func: f.Name, Symbol: p.Symbol(b.Lang, f), Kind: f.Kind, Want: base.Calls[f.Name],
			Goprobe: -1, Trace: -1, Perf: -1, Bpftrace: -1}
		for _, pa := range f.Params {
			if pa.Unused {
				if fr.unused == nil {
					fr.unused = map[string]bool{}
				}
				fr.unused[pa.Name] = true
			}
		}
		res.Funcs = append(res.Funcs, fr)
		byDef[fr.Symbol] = fr
		defs = append(defs, fr.Symbol)
	}
	shapes(bin, res, b.Lang)
	t0 = res.step("shapes", t0)
	defs = goprobeSites(t.Goprobe, bin, defs, byDef)
	t0 = res.step("sites", t0)
	if len(defs) > 0 {
		if err := goprobeStat(t.Goprobe, bin, dir, defs, nargs, byDef); err != nil {
			return nil, err
		}
		t0 = res.step("stat", t0)
		if err := goprobeTrace(t.Goprobe, bin, dir, defs, nargs, byDef, p, b.Lang); err != nil {
			return nil, err
		}
		t0 = res.step("trace", t0)
		for _, run := range []string{"stat", "trace"} {
			if err := sameRecord(dir, run); err != nil {
				return nil, err
			}
		}
	}
	if t.Perf {
		perfCount(bin, dir, nargs, res)
		t0 = res.step("perf", t0)
	}
	if t.Bpftrace {
		bpftraceCount(bin, dir, nargs, res, b.Lang)
		res.step("bpftrace", t0)
	}
	return res, nil
}

// runRecord runs bin with args and the record file, and reads the record.
func runRecord(bin, dir, name string, args []string) (*Record, error) {
	rec := filepath.Join(dir, name+".rec")
	cmd := exec.Command(bin, append(args, rec)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %v %s", bin, err, out)
	}
	return ReadRecord(rec)
}

var noFunction = regexp.MustCompile(`no function (\S+)`)

// goprobeSites resolves the definitions with one goprobe gen: each
// function's sites as stat probes them (its definition) and how each site
// reads its arguments as trace probes them ("DEF $params"); a definition
// it cannot resolve is dropped (with the reason) and the rest tried again.
// It returns the definitions left.
func goprobeSites(goprobe, bin string, defs []string, byDef map[string]*FuncResult) []string {
	for len(defs) > 0 {
		args := []string{"gen", "--format=spec", "-x", bin}
		for _, d := range defs {
			args = append(args, d, d+paramsDef)
		}
		cmd := exec.Command(goprobe, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			drop := ""
			if m := noFunction.FindStringSubmatch(msg); m != nil {
				drop = m[1]
			}
			if byDef[drop] == nil {
				for _, d := range defs {
					byDef[d].GoprobeErr = msg
				}
				return nil
			}
			byDef[drop].GoprobeErr = msg
			defs = without(defs, drop)
			continue
		}
		var spec struct {
			Probes []struct {
				Def   string
				Sites []struct {
					Kind     string
					Function string
					Addr     uint64
					Note     string
					Args     []specArg
				}
			}
		}
		if err := json.Unmarshal(out, &spec); err != nil {
			for _, d := range defs {
				byDef[d].GoprobeErr = "spec: " + err.Error()
			}
			return nil
		}
		for _, pr := range spec.Probes {
			if fr := byDef[strings.TrimSuffix(pr.Def, paramsDef)]; fr != nil && strings.HasSuffix(pr.Def, paramsDef) {
				for _, s := range pr.Sites {
					fr.noteArgs(s.Addr, s.Args)
				}
				continue
			}
			fr := byDef[pr.Def]
			if fr == nil {
				continue
			}
			var ss []string
			for _, s := range pr.Sites {
				x := fmt.Sprintf("%s@%#x", s.Kind, s.Addr)
				if s.Function != "" && s.Kind == "inline" {
					x += "(in " + s.Function + ")"
				}
				if s.Note != "" {
					x += "[" + s.Note + "]"
				}
				ss = append(ss, x)
			}
			fr.Sites = strings.Join(ss, " ")
		}
		return defs
	}
	return nil
}

// paramsDef turns a function's definition into trace's: all its
// parameters.
const paramsDef = " $params"

func without(ss []string, s string) []string {
	var out []string
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func goprobeStat(goprobe, bin, dir string, defs, nargs []string, byDef map[string]*FuncResult) error {
	rec := filepath.Join(dir, "stat.rec")
	args := append([]string{"stat", "--json"}, defs...)
	args = append(append(append(args, "--", bin), nargs...), rec)
	cmd := exec.Command(goprobe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("goprobe stat: %v: %s", err, stderr.String())
	}
	var st struct {
		Probes []struct {
			Probe string
			Count int
		}
	}
	if err := json.Unmarshal(lastLine(out), &st); err != nil {
		return fmt.Errorf("goprobe stat: %v: %s", err, out)
	}
	r, err := ReadRecord(rec)
	if err != nil {
		return err
	}
	for _, p := range st.Probes {
		if fr := byDef[p.Probe]; fr != nil {
			fr.Goprobe = p.Count
			if w := r.Calls[fr.Func]; w != fr.Want {
				return fmt.Errorf("%s: %d calls under goprobe stat, %d without", fr.Func, w, fr.Want)
			}
		}
	}
	return nil
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func goprobeTrace(goprobe, bin, dir string, defs, nargs []string, byDef map[string]*FuncResult, p *Program, lang Lang) error {
	rec := filepath.Join(dir, "trace.rec")
	args := []string{"trace", "--json"}
	def := map[string]string{} // "fn03 $params" -> fn03
	for _, d := range defs {
		args = append(args, d+paramsDef)
		def[d+paramsDef] = d
	}
	args = append(append(append(args, "--", bin), nargs...), rec)
	cmd := exec.Command(goprobe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("goprobe trace: %v: %s", err, stderr.String())
	}
	r, err := ReadRecord(rec)
	if err != nil {
		return err
	}
	for _, fr := range byDef {
		if fr.GoprobeErr == "" {
			fr.Trace = 0
			fr.TraceWant = r.Calls[fr.Func]
		}
	}
	evs := map[*FuncResult][]event{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		if d.Decode(&e) != nil || e.Probe == "" {
			continue
		}
		if fr := byDef[def[e.Probe]]; fr != nil {
			evs[fr] = append(evs[fr], e)
			fr.Trace++
		}
	}
	calls := callPairing(p, lang, bin, r, evs)
	params := map[string][]Param{}
	if p != nil {
		for _, f := range p.Funcs {
			params[f.Name] = f.Params
		}
	}
	for _, fr := range byDef {
		// Each function's printed values, per parameter.
		printed := map[string][]any{}
		for k, e := range evs[fr] {
			call := k
			if c, ok := calls[fr]; ok {
				call = c[k]
			}
			if call != k {
				fr.Reordered++
			}
			for name, v := range e.Args {
				printed[name] = append(printed[name], v)
				fr.noteValue(e.Addr, name, v, call)
				if x, ok := number(v); ok {
					fr.read = append(fr.read, readValue{e.Addr, name, x, call})
				}
			}
			// A parameter the event leaves out is a value not
			// printed: a ? (judged by gdb like the others), not
			// nothing.
			for _, pa := range params[fr.Func] {
				if _, ok := e.Args[pa.Name]; !ok {
					printed[pa.Name] = append(printed[pa.Name], nil)
					fr.noteAbsent(e.Addr, pa.Name, call)
				}
			}
		}
		compareValues(fr, printed, r.Values[fr.Func])
		fr.compareCalls(r.Values[fr.Func])
	}
	return nil
}

// event is one line of goprobe trace --json.
type event struct {
	Probe string
	Addr  string
	Args  map[string]any
}

// callPairing gives, per function counted exactly whose events do not
// all arrive in call order, the call each event is (see pairEvents); the
// functions it leaves out are paired in order. Without the evidence (the
// record not parsed, no DWARF), every function is paired in order.
func callPairing(p *Program, lang Lang, bin string, r *Record, evs map[*FuncResult][]event) map[*FuncResult][]int {
	if p == nil {
		return nil
	}
	byName := map[string]int{}
	for i, f := range p.Funcs {
		byName[f.Name] = i
	}
	seq, ok := p.statements(r.Seq, func(fn string, k int) (int64, bool) {
		vs := r.Values[fn][p.Funcs[byName[fn]].Params[0].Name]
		if k >= len(vs) {
			return 0, false
		}
		return vs[k], true
	}, lang)
	if !ok {
		return nil
	}
	lines, ok := p.callLines(p.Source(lang))
	if !ok {
		return nil
	}
	exps, err := p.expansions(bin, lines)
	if err != nil {
		return nil
	}
	out := map[*FuncResult][]int{}
	for fr, es := range evs {
		if fr.Trace != fr.TraceWant {
			continue
		}
		fi := byName[fr.Func]
		var made, at []stmt
		for k, fn := range r.Seq {
			if fn == fr.Func {
				made = append(made, seq[k])
			}
		}
		for _, e := range es {
			a, err := strconv.ParseUint(e.Addr, 0, 64)
			s := noStmt
			if err == nil {
				s = siteStmt(exps, fi, a)
			}
			at = append(at, s)
		}
		out[fr] = pairEvents(at, made)
	}
	return out
}

// readValue is a value the trace printed: at the site at addr, of
// argument name, in the function's call-th call.
type readValue struct {
	addr, name string
	x          int64
	call       int
}

// compareCalls compares each value the trace printed with the one its
// own call passed (a function's k-th event is its k-th call when the trace
// counted it exactly; else nothing is compared): the values that differ,
// per site and argument, with an example, in CallWrong and WrongAt. They
// are then the wrong values: every value compareValues finds no call
// passed is among them, and so is one another call passed.
func (fr *FuncResult) compareCalls(want map[string][]int64) {
	if fr.Trace != fr.TraceWant {
		return
	}
	defer func() {
		if fr.CallWrong > fr.Wrong {
			fr.Wrong = fr.CallWrong
			fr.WrongEx = fr.wrongAtEx[0]
		}
	}()
	for _, rv := range fr.read {
		w := want[rv.name]
		if rv.call >= len(w) || w[rv.call] == rv.x {
			continue
		}
		fr.CallWrong++
		if fr.WrongAt == nil {
			fr.WrongAt = map[string]int{}
		}
		key := fmt.Sprintf("%s %s", rv.addr, rv.name)
		if fr.WrongAt[key] == 0 {
			fr.wrongAtEx = append(fr.wrongAtEx, fmt.Sprintf("%s (e.g. %d where the call passed %d)", key, rv.x, w[rv.call]))
		}
		fr.WrongAt[key]++
	}
	fr.read = nil
}

// compareValues counts, per parameter, the printed values no call passed
// (a multiset difference) and those printed as ?.
func compareValues(fr *FuncResult, printed map[string][]any, want map[string][]int64) {
	names := make([]string, 0, len(printed))
	for k := range printed {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		left := map[int64]int{}
		for _, v := range want[name] {
			left[v]++
		}
		known := want[name] != nil
		for _, v := range printed[name] {
			fr.Values++
			x, ok := number(v)
			if !ok {
				fr.Unreadable++
				continue
			}
			if !known {
				// A parameter the program does not record (none
				// should exist): a name goprobe made up is wrong.
				fr.Wrong++
				if fr.WrongEx == "" {
					fr.WrongEx = fmt.Sprintf("%s=%v (no such parameter)", name, v)
				}
				continue
			}
			if left[x] > 0 {
				left[x]--
				continue
			}
			if slices.Contains(want[name], x) {
				fr.Surplus++
				continue
			}
			fr.Wrong++
			if fr.WrongEx == "" {
				fr.WrongEx = fmt.Sprintf("%s=%d (passed: %s)", name, x, sample(want[name]))
			}
		}
	}
}

func sample(vs []int64) string {
	seen := map[int64]bool{}
	var s []string
	for _, v := range vs {
		if !seen[v] && len(s) < 6 {
			seen[v] = true
			s = append(s, strconv.FormatInt(v, 10))
		}
	}
	return strings.Join(s, ",")
}

// number reads a printed value: a JSON number, or a hexadecimal string
// (pointers); null (?) is not one.
func number(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return int64(u), true
		}
	case string:
		if u, err := strconv.ParseUint(x, 0, 64); err == nil {
			return int64(u), true
		}
	}
	return 0, false
}

// shapes says what the binary holds of each function: an out-of-line
// copy (entry), clones, hot/cold or partial-inlining parts (split), from
// the symbol table; inline expansions are added from goprobe's sites.
func shapes(bin string, res *Result, lang Lang) {
	f, err := elf.Open(bin)
	if err != nil {
		return
	}
	defer f.Close()
	syms, _ := f.Symbols()
	inl := inlined(f)
	for _, fr := range res.Funcs {
		var sh []string
		add := func(s string) {
			for _, x := range sh {
				if x == s {
					return
				}
			}
			sh = append(sh, s)
		}
		for _, s := range symbolsOf(syms, fr, lang) {
			switch {
			case strings.Contains(s, ".constprop") || strings.Contains(s, ".isra"):
				add("clone")
			case strings.Contains(s, ".part") || strings.Contains(s, ".cold"):
				add("split")
			default:
				add("entry")
			}
		}
		if inl[fr.Func] > 0 {
			add(fmt.Sprintf("inline%d", inl[fr.Func]))
		}
		if len(sh) == 0 {
			sh = append(sh, "gone")
		}
		fr.Shape = strings.Join(sh, "+")
	}
}

// inlined counts each function's inline expansions in the DWARF, by the
// last component of its name (fn03 of main.fn03 or prog::fn03).
func inlined(f *elf.File) map[string]int {
	out := map[string]int{}
	d, err := f.DWARF()
	if err != nil {
		return out
	}
	names := map[dwarf.Offset]string{}
	origin := map[dwarf.Offset]dwarf.Offset{}
	var refs []dwarf.Offset
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if n, ok := e.Val(dwarf.AttrName).(string); ok {
			names[e.Offset] = n
		}
		if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			origin[e.Offset] = o
			if e.Tag == dwarf.TagInlinedSubroutine {
				refs = append(refs, o)
			}
		}
		if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
			origin[e.Offset] = o
		}
	}
	for _, o := range refs {
		for i := 0; i < 4 && names[o] == ""; i++ {
			o = origin[o]
		}
		n := names[o]
		if i := strings.LastIndexAny(n, ".:"); i >= 0 {
			n = n[i+1:]
		}
		out[n]++
	}
	return out
}

// symbolsOf are the symbols of fr's code: its own and its clones' and
// parts' (fn03, fn03.constprop.0, fn03.cold), Rust's mangled name.
func symbolsOf(syms []elf.Symbol, fr *FuncResult, lang Lang) []string {
	var out []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		switch lang {
		case Rust:
			if strings.Contains(s.Name, "4prog"+strconv.Itoa(len(fr.Func))+fr.Func) {
				out = append(out, s.Name)
			}
		default:
			if s.Name == fr.Symbol || strings.HasPrefix(s.Name, fr.Symbol+".") {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// Env is the environment for the probed programs and peers.
var Env = os.Environ()

package gen

import (
	"cmp"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// pieBase is where gdb loads a position-independent x86-64 executable
// with address randomization off.
const pieBase = 0x555555554000

// GDBCheck is how the (site, argument) pairs goprobe printed as ? in one
// program compare with gdb, run to the program's end with a breakpoint at
// the same site that reads the argument at every pass (see judge): Agree
// counts those gdb has no value for either (<optimized out>, or no such
// argument), GDBWrong lists those where it prints a value the call did
// not pass (by the program's record of that run: gdb reads the same debug
// info, which is wrong there, and the ? is right), Differ those where
// every value it prints is the call's, NoStop those where gdb made no
// stop in the function's frame at a pass the trace printed ? at.
type GDBCheck struct {
	Agree                    int
	GDBWrong, Differ, NoStop []string
}

// Add adds c's figures to g.
func (g *GDBCheck) Add(c GDBCheck) {
	g.Agree += c.Agree
	g.GDBWrong, g.Differ = append(g.GDBWrong, c.GDBWrong...), append(g.Differ, c.Differ...)
	g.NoStop = append(g.NoStop, c.NoStop...)
}

// Compared is how many ? gdb stopped at.
func (g *GDBCheck) Compared() int { return g.Agree + len(g.GDBWrong) + len(g.Differ) }

// CheckUnread compares the (site, argument) pairs that r's trace printed
// as ? with gdb (see GDBCheck): every pair when most is negative, else up
// to most of them, spread over the functions and sites (every k-th in
// order). One gdb run of the program, with the trace's N, stops at every
// site of them and reads each argument at every pass; the passes where
// the trace printed ? are judged, each against the call it was (the
// programs run the same calls in the same order whatever N, and a
// function's k-th event in the trace is its k-th call when the trace
// counted it exactly; otherwise against every value the calls passed).
func (r *Result) CheckUnread(most int) (GDBCheck, error) {
	var c GDBCheck
	var ps []gdbPair
	for _, fr := range r.Funcs {
		for k := range fr.UnreadAt { // "0x1234 a: why"
			at, rest, _ := strings.Cut(k, " ")
			arg, why, _ := strings.Cut(rest, ": ")
			addr, err := strconv.ParseUint(at, 0, 64)
			if err == nil {
				ps = append(ps, gdbPair{fr, arg, why, addr})
			}
		}
	}
	if len(ps) == 0 {
		return c, nil
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].fr.Symbol != ps[j].fr.Symbol {
			return ps[i].fr.Symbol < ps[j].fr.Symbol
		}
		return ps[i].addr < ps[j].addr || ps[i].addr == ps[j].addr && ps[i].arg < ps[j].arg
	})
	if most > 0 && len(ps) > most {
		step := (len(ps) + most - 1) / most
		var some []gdbPair
		for i := 0; i < len(ps); i += step {
			some = append(some, ps[i])
		}
		ps = some
	}
	var stops []GDBStop
	for _, p := range ps {
		stops = append(stops, GDBStop{Addr: p.addr, Func: p.fr.Symbol, Arg: p.arg})
	}
	vals, rec, err := GDBRun(r.Bin, r.Dir, r.N, stops)
	if err != nil {
		// Every pair stays counted: gdb made no stop at any of them.
		for _, p := range ps {
			c.NoStop = append(c.NoStop, fmt.Sprintf("%s seed=%d %s at %#x: goprobe ? (%s) %s; gdb did not run: %v",
				r.Build, r.Seed, p.fr.Symbol, p.addr, cmp.Or(p.why, "a read that faulted"), p.arg, err))
		}
		return c, err
	}
	for i, p := range ps {
		c.judge(r, p, vals[i], rec)
	}
	return c, nil
}

// gdbPair is a site's argument the trace printed as ?, and why.
type gdbPair struct {
	fr       *FuncResult
	arg, why string
	addr     uint64
}

// judge adds the verdict on one pair to c: vals are gdb's readings at
// each pass through the site ("" no value, nil where gdb made no stop in
// the function's frame), rec the record of gdb's run. gdb is wrong at the
// site when it prints, at any pass where the trace printed ?, a value that
// call did not pass; otherwise a value it prints there is one goprobe
// could have printed.
func (c *GDBCheck) judge(r *Result, p gdbPair, vals []*string, rec *Record) {
	passed := rec.Values[p.fr.Func][p.arg]
	exactCalls := p.fr.Trace == p.fr.TraceWant
	left := map[int64]int{}
	for _, v := range passed {
		left[v]++
	}
	seen := map[string]int{}
	var order []string
	none, right, wrong, unread := 0, 0, 0, 0
	for k, call := range p.fr.unreadHit[fmt.Sprintf("%#x %s", p.addr, p.arg)] {
		if call >= 0 {
			unread++
		}
		if call < 0 || k >= len(vals) || vals[k] == nil {
			continue // read by goprobe, or a pass gdb made no stop in fn's frame
		}
		v := *vals[k]
		if seen[v] == 0 {
			order = append(order, v)
		}
		seen[v]++
		x, isNum := gdbNumber(v)
		switch {
		case !isNum:
			none++ // "", <optimized out>, <error: ...>, <synthetic pointer>
		case exactCalls && call < len(passed):
			if x == passed[call] {
				right++
			} else {
				wrong++
			}
		case left[x] > 0:
			left[x]--
			right++
		default:
			wrong++
		}
	}
	var at []string
	for _, v := range order {
		at = append(at, fmt.Sprintf("%q×%d", v, seen[v]))
	}
	line := fmt.Sprintf("%s seed=%d %s at %#x: goprobe ? (%s), gdb %s = %s: %d passes no value, %d this call's value, %d another",
		r.Build, r.Seed, p.fr.Symbol, p.addr, cmp.Or(p.why, "a read that faulted"), p.arg, strings.Join(at, " "), none, right, wrong)
	switch {
	case wrong > 0:
		c.GDBWrong = append(c.GDBWrong, line+fmt.Sprintf(" (passed: %s)", sample(passed)))
	case right > 0:
		c.Differ = append(c.Differ, line)
	case none > 0:
		c.Agree++
	default:
		finished := "ran to its end"
		if rec.Calls == nil {
			finished = "did not write its record"
		}
		noframe := 0
		for _, v := range vals {
			if v == nil {
				noframe++
			}
		}
		c.NoStop = append(c.NoStop, fmt.Sprintf("%s seed=%d %s at %#x: goprobe ? (%s) %s at %d passes; gdb stopped %d times there, %d of them with no frame of the function, and %s",
			r.Build, r.Seed, p.fr.Symbol, p.addr, cmp.Or(p.why, "a read that faulted"), p.arg, unread, len(vals), noframe, finished))
	}
}

// gdbNumber reads the number at the start of a value gdb prints ("126",
// "-3", "0x7ffe...", "97 'a'").
func gdbNumber(v string) (int64, bool) {
	f, _, _ := strings.Cut(v, " ")
	if x, err := strconv.ParseInt(f, 0, 64); err == nil {
		return x, true
	}
	if u, err := strconv.ParseUint(f, 0, 64); err == nil {
		return int64(u), true
	}
	return 0, false
}

// GDBStop is an argument to read at a site (a file address), in the frame
// of the function Func.
type GDBStop struct {
	Addr      uint64
	Func, Arg string
}

// gdbHits is the Python that sets a breakpoint at each site (STOPS: per
// run-time address, the stops' indexes, functions and arguments); at each
// hit it finds each stop's frame (walking up from the innermost: `frame
// function` does not select Rust's inline frames), prints the argument's
// value there, or the error gdb met reading it ("Incompatible types on
// DWARF stack": an exception would end the run), and goes on, so that the
// program runs to its end and writes its record.
const gdbHits = `import gdb
STOPS = %s
class Hit(gdb.Breakpoint):
    def stop(self):
        for i, fn, arg in STOPS[self.at]:
            try:
                f = gdb.newest_frame()
                while f is not None and f.name() != fn:
                    f = f.older()
            except gdb.error:
                f = None
            if f is None:
                print("@@%%d noframe" %% i)
                continue
            try:
                v = str(f.read_var(arg)).replace("\n", " ")
                print("@@%%d val %%s" %% (i, v))
            except ValueError:
                print("@@%%d none" %% i)
            except gdb.error as e:
                print("@@%%d val <error: %%s>" %% (i, str(e).replace("\n", " ")))
        return False
for at in STOPS:
    Hit("*%%#x" %% at).at = at
gdb.execute("run")
`

// GDBRun runs bin (a generated program, with n and its record in dir)
// under gdb to its end, with a breakpoint at each stop's site, and at each
// pass through it reads the stop's argument in the frame of its function:
// per stop, the value gdb prints at each pass in order ("" for an
// argument gdb does not list, nil where gdb found no frame of the
// function), and the program's record of the run. A program that did
// not finish under gdb gives no values and no error.
//
// gdb steps over its breakpoints in place, all threads stopped, not in a
// copy of the instruction elsewhere (displaced stepping): gdb 13 runs a
// RIP-relative load there with a scratch register set to the original
// next instruction's address, and at times leaves it so (go seeds 2737
// and 2773: after the stop at 0x4a259f, a mov of main.genN(%rip), RBX
// held 0x4a25a6 instead of genRing's address, and the program died with
// SIGSEGV on its next store; without displaced stepping it ran to its
// end, its record the same as without gdb).
func GDBRun(bin, dir string, n int, stops []GDBStop) ([][]*string, *Record, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, nil, err
	}
	base := uint64(0)
	if f.Type == elf.ET_DYN {
		base = pieBase
	}
	f.Close()
	var py strings.Builder
	py.WriteString("{")
	byAt := map[uint64][]string{}
	var ats []uint64
	for i, s := range stops {
		at := s.Addr + base
		if byAt[at] == nil {
			ats = append(ats, at)
		}
		byAt[at] = append(byAt[at], fmt.Sprintf("(%d, %q, %q)", i, s.Func, s.Arg))
	}
	for _, at := range ats {
		fmt.Fprintf(&py, "%#x: [%s], ", at, strings.Join(byAt[at], ", "))
	}
	py.WriteString("}")
	script := filepath.Join(dir, "gdb-hits.py")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(gdbHits, py.String())), 0o644); err != nil {
		return nil, nil, err
	}
	recPath := filepath.Join(dir, "gdb.rec")
	os.Remove(recPath)
	out, _ := exec.Command("gdb", "-batch", "-nx", "-ex", "set disable-randomization on", "-ex", "set displaced-stepping off", "-x", script,
		"--args", bin, strconv.Itoa(n), recPath).CombinedOutput()
	vals := make([][]*string, len(stops))
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, "@@")
		if !ok {
			continue
		}
		idx, what, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= len(stops) {
			continue
		}
		var v *string
		switch {
		case what == "none":
			v = new(string)
		case strings.HasPrefix(what, "val "):
			x := strings.TrimPrefix(what, "val ")
			v = &x
		}
		vals[i] = append(vals[i], v)
	}
	rec, err := ReadRecord(recPath)
	if err != nil {
		return make([][]*string, len(stops)), &Record{}, nil
	}
	return vals, rec, nil
}

// GDBValues runs bin under gdb with n 5 (see GDBRun) and reads arg in the
// frame of fn at each pass through addr where gdb found that frame. ok is
// false when gdb made no such stop or the program did not finish.
func GDBValues(bin, dir string, addr uint64, fn, arg string) (vals []string, rec *Record, ok bool, err error) {
	vs, rec, err := GDBRun(bin, dir, 5, []GDBStop{{addr, fn, arg}})
	if err != nil {
		return nil, nil, false, err
	}
	for _, v := range vs[0] {
		if v != nil {
			vals = append(vals, *v)
		}
	}
	return vals, rec, len(vals) > 0, nil
}

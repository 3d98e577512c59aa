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

// GDBCheck is how the arguments goprobe printed as ? in one program
// compare with gdb, run to the program's end with a breakpoint at the same
// site that reads the argument at every pass: Agree counts those gdb has
// no value for either (<optimized out>, or no such argument), GDBWrong
// lists those it prints values for that the calls did not pass (by the
// program's record of that run, a multiset: gdb reads the same debug
// info, which is wrong there, and the ? is right), Differ those where
// every value it prints is one a call passed, Skipped those whose stop or
// frame gdb did not make.
type GDBCheck struct {
	Agree, Skipped   int
	GDBWrong, Differ []string
}

// Add adds c's figures to g.
func (g *GDBCheck) Add(c GDBCheck) {
	g.Agree, g.Skipped = g.Agree+c.Agree, g.Skipped+c.Skipped
	g.GDBWrong, g.Differ = append(g.GDBWrong, c.GDBWrong...), append(g.Differ, c.Differ...)
}

// Compared is how many ? gdb stopped at.
func (g *GDBCheck) Compared() int { return g.Agree + len(g.GDBWrong) + len(g.Differ) }

// CheckUnread compares up to most of the (site, argument) pairs that r's
// trace printed as ? with gdb (see GDBCheck), spread over the functions
// and sites (every k-th of them in order), at the passes through the site
// where the trace printed ?.
func (r *Result) CheckUnread(dir string, most int) (GDBCheck, error) {
	var c GDBCheck
	type pair struct {
		fr       *FuncResult
		arg, why string
		addr     uint64
	}
	var ps []pair
	for _, fr := range r.Funcs {
		for k := range fr.UnreadAt { // "0x1234 a: why"
			at, rest, _ := strings.Cut(k, " ")
			arg, why, _ := strings.Cut(rest, ": ")
			addr, err := strconv.ParseUint(at, 0, 64)
			if err == nil {
				ps = append(ps, pair{fr, arg, why, addr})
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
	step := max(1, (len(ps)+most-1)/most)
	for i := 0; i < len(ps); i += step {
		p := ps[i]
		vals, rec, ok, err := GDBValues(r.Bin, dir, p.addr, p.fr.Symbol, p.arg)
		if err != nil {
			return c, err
		}
		// The passes where goprobe printed ?: the programs run the
		// same calls in the same order whatever N, so gdb's k-th pass
		// is the trace's k-th.
		unread := p.fr.unreadHit[fmt.Sprintf("%#x %s", p.addr, p.arg)]
		var at []string
		for k, v := range vals {
			if k < len(unread) && unread[k] {
				at = append(at, v)
			}
		}
		if !ok || len(at) == 0 {
			c.Skipped++
			continue
		}
		vals = at
		why := cmp.Or(p.why, "a read that faulted")
		line := fmt.Sprintf("%s seed=%d %s at %#x: goprobe ? (%s), gdb %s = %s", r.Build, r.Seed, p.fr.Symbol, p.addr, why, p.arg, strings.Join(vals, ","))
		// The values gdb prints, against those the calls passed (a
		// multiset: one call, one value).
		left := map[int64]int{}
		for _, v := range rec.Values[p.fr.Func][p.arg] {
			left[v]++
		}
		printed, wrong := false, false
		for _, v := range vals {
			if v == "" || v == "<optimized out>" {
				continue
			}
			printed = true
			x, isNum := gdbNumber(v)
			if isNum && left[x] > 0 {
				left[x]--
				continue
			}
			wrong = wrong || isNum
		}
		switch {
		case !printed:
			c.Agree++
		case wrong:
			c.GDBWrong = append(c.GDBWrong, line+fmt.Sprintf(" (passed: %s)", sample(rec.Values[p.fr.Func][p.arg])))
		default:
			c.Differ = append(c.Differ, line)
		}
	}
	return c, nil
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

// gdbHits is the Python a breakpoint at each hit runs: it finds the frame
// of fn (walking up from the innermost: `frame function` does not select
// Rust's inline frames), prints arg's value there and goes on, so that the
// program runs to its end and writes its record.
const gdbHits = `import gdb
class Hit(gdb.Breakpoint):
    def stop(self):
        f = gdb.newest_frame()
        while f is not None and f.name() != %q:
            f = f.older()
        if f is None:
            print("@@noframe")
            return False
        try:
            print("@@val " + str(f.read_var(%q)))
        except ValueError:
            print("@@none")
        return False
Hit("*%#x")
gdb.execute("run")
`

// GDBValues runs bin (a generated program, with N 5 and its record in
// dir) under gdb to its end, and at each pass through addr (a file
// address) reads arg in the frame of fn: the values gdb prints there,
// "" for an argument gdb does not list, and the program's record of the
// run. ok is false when gdb made no stop in fn's frame or the program did
// not finish.
func GDBValues(bin, dir string, addr uint64, fn, arg string) (vals []string, rec *Record, ok bool, err error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, nil, false, err
	}
	at := addr
	if f.Type == elf.ET_DYN {
		at += pieBase
	}
	f.Close()
	script := filepath.Join(dir, "gdb-hits.py")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(gdbHits, fn, arg, at)), 0o644); err != nil {
		return nil, nil, false, err
	}
	recPath := filepath.Join(dir, "gdb.rec")
	os.Remove(recPath)
	out, _ := exec.Command("gdb", "-batch", "-nx", "-ex", "set disable-randomization on", "-x", script,
		"--args", bin, "5", recPath).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "@@val "):
			vals = append(vals, strings.TrimPrefix(line, "@@val "))
		case line == "@@none":
			vals = append(vals, "")
		}
	}
	rec, err = ReadRecord(recPath)
	if len(vals) == 0 || err != nil {
		return nil, nil, false, nil
	}
	return vals, rec, true, nil
}

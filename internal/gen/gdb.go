package gen

import (
	"debug/elf"
	"fmt"
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
// compare with gdb stopped at the same site: Agree counts those gdb has
// no value for either (<optimized out>, or no such argument), Differ
// lists those it prints, Skipped those whose stop or frame gdb did not
// make.
type GDBCheck struct {
	Agree, Skipped int
	Differ         []string
}

// CheckUnread compares up to max of the (site, argument) pairs that r's
// trace printed as ? with gdb's `info args` there.
func (r *Result) CheckUnread(dir string, max int) (GDBCheck, error) {
	var c GDBCheck
	type pair struct {
		fn, arg, why string
		addr         uint64
	}
	var ps []pair
	for _, fr := range r.Funcs {
		for k := range fr.UnreadAt { // "0x1234 a: why"
			at, rest, _ := strings.Cut(k, " ")
			arg, why, _ := strings.Cut(rest, ": ")
			addr, err := strconv.ParseUint(at, 0, 64)
			if err == nil {
				ps = append(ps, pair{fr.Symbol, arg, why, addr})
			}
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].fn != ps[j].fn {
			return ps[i].fn < ps[j].fn
		}
		return ps[i].addr < ps[j].addr || ps[i].addr == ps[j].addr && ps[i].arg < ps[j].arg
	})
	for i, p := range ps {
		if i >= max {
			break
		}
		args, ok, err := GDBArgs(r.Bin, dir, p.addr, p.fn)
		if err != nil {
			return c, err
		}
		v, listed := args[p.arg]
		switch {
		case !ok:
			c.Skipped++
		case listed && v != "<optimized out>":
			why := p.why
			if why == "" {
				why = "a read that faulted"
			}
			c.Differ = append(c.Differ, fmt.Sprintf("%s seed=%d %s at %#x: goprobe ? (%s), gdb %s = %s", r.Build, r.Seed, p.fn, p.addr, why, p.arg, v))
		default:
			c.Agree++
		}
	}
	return c, nil
}

// GDBArgs runs bin (a generated program, with N 5 and its record in dir)
// under gdb, stops at addr (a file address), selects the frame of fn and
// returns `info args`: each argument's printed value. ok is false when
// the stop or the frame did not happen.
func GDBArgs(bin, dir string, addr uint64, fn string) (args map[string]string, ok bool, err error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, false, err
	}
	pie := f.Type == elf.ET_DYN
	f.Close()
	at := addr
	if pie {
		at += pieBase
	}
	out, _ := exec.Command("gdb", "-batch", "-nx",
		"-ex", "set disable-randomization on",
		"-ex", fmt.Sprintf("starti 5 %s", filepath.Join(dir, "gdb.rec")),
		"-ex", fmt.Sprintf("break *%#x", at),
		"-ex", "continue",
		"-ex", "echo @@frame\\n",
		"-ex", "frame function "+fn,
		"-ex", "echo @@args\\n",
		"-ex", "info args",
		"-ex", "echo @@end\\n",
		"-ex", "kill", bin).CombinedOutput()
	text := string(out)
	_, rest, ok := strings.Cut(text, "@@frame\n")
	if !ok {
		return nil, false, nil
	}
	frame, listed, ok := strings.Cut(rest, "@@args\n")
	if !ok || !strings.Contains(frame, fn) || strings.Contains(frame, "No stack") || strings.Contains(frame, "No frame") {
		return nil, false, nil
	}
	listed, _, _ = strings.Cut(listed, "@@end")
	vals := map[string]string{}
	for _, line := range strings.Split(listed, "\n") {
		if k, v, ok := strings.Cut(line, " = "); ok {
			vals[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if len(vals) == 0 && !strings.Contains(listed, "No arguments") {
		return nil, false, nil
	}
	return vals, true, nil
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// listedNm: goprobe list names every function nm finds in bin that
// matches pat (and, for a pattern, only names that match it).
func listedNm(t *testing.T, out, bin, pat string) error {
	listed := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(l, "func "); ok {
			name, _, _ = strings.Cut(name, " (")
			listed[name] = true
		}
	}
	n := 0
	for name := range nmFuncs(t, bin) {
		if !globMatch(pat, name) || strings.HasPrefix(name, "_") {
			continue
		}
		n++
		if !listed[name] {
			return fmt.Errorf("nm has %s, goprobe list does not", name)
		}
	}
	if n == 0 {
		return fmt.Errorf("nm has no function matching %s", pat)
	}
	return nil
}

// listedNotes: goprobe list's USDT probes are readelf's notes matching
// pat, with their numbers of sites.
func listedNotes(t *testing.T, out, bin, pat string) error {
	row := regexp.MustCompile(`^usdt:(\S+) \((\d+) sites?`)
	got := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			got[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	want := map[string]int{}
	for n, k := range readelfNotes(t, bin) {
		if globMatch(pat, n) {
			want[n] = k
		}
	}
	if err := sameSet(keysOf(got), keysOf(want)); err != nil {
		return err
	}
	for n, k := range want {
		if got[n] != k {
			return fmt.Errorf("%s: %d sites listed, readelf has %d notes", n, got[n], k)
		}
	}
	return nil
}

// protoAsGDB: list -v's prototype of fn has the types gdb's whatis gives.
func protoAsGDB(t *testing.T, out, bin, fn string) error {
	gdb, err := exec.Command("gdb", "-batch", "-ex", "whatis "+fn, bin).Output()
	if err != nil {
		t.Fatalf("gdb: %v", err)
	}
	m := regexp.MustCompile(`type = (.*?) ?\((.*)\)`).FindStringSubmatch(string(gdb))
	if m == nil {
		t.Fatalf("gdb whatis %s: %s", fn, gdb)
	}
	want := m[1] + "(" + m[2] + ")"
	line := regexp.MustCompile(`(?m)^func (.*) \*?` + regexp.QuoteMeta(fn) + `\((.*)\)$`).FindStringSubmatch(out)
	if line == nil {
		return fmt.Errorf("no prototype of %s in %q", fn, out)
	}
	var types []string
	for _, p := range strings.Split(line[2], ", ") {
		// Drop the parameter's name: the last identifier.
		types = append(types, strings.TrimSpace(regexp.MustCompile(`\w+$`).ReplaceAllString(p, "")))
	}
	ret := line[1]
	if strings.HasSuffix(line[0][:strings.Index(line[0], fn)], "*") {
		ret += " *"
	}
	got := ret + "(" + strings.Join(types, ", ") + ")"
	norm := strings.NewReplacer("long int", "long", " *", "*", "* ", "*")
	if norm.Replace(got) != norm.Replace(want) {
		return fmt.Errorf("goprobe list -v: %s, gdb whatis: %s", got, want)
	}
	return nil
}

// pieBase is where a PIE loads with address space randomization off (as
// under gdb and setarch -R) on x86-64.
const pieBase = 0x555555554000

// stackAsGDB: the event's stack, as names, file:line, raw addresses or
// build-id+offset, is gdb's backtrace at the function (frame 0 is where
// the probe is, inside the function; gdb stops past its prologue).
func (p *btProgs) stackAsGDB(t *testing.T, kind, arg string, evs []btEvent) error {
	parts := strings.Split(arg, ":")
	bin, fn, depth := p.path[parts[0]], parts[1], 0
	if len(parts) > 2 {
		depth, _ = strconv.Atoi(parts[2])
	}
	if len(evs) == 0 || len(evs[0].Stack) == 0 {
		return errors.New("no stack")
	}
	st := evs[0].Stack
	gdb := gdbBacktrace(t, bin, fn, "3")
	if len(gdb) < 3 {
		t.Fatalf("gdb's backtrace at %s: %v", fn, gdb)
	}
	if depth == 0 {
		depth = len(gdb)
	} else if len(st) != depth {
		return fmt.Errorf("%d frames, want %d: %v", len(st), depth, st)
	}
	if len(st) < depth {
		return fmt.Errorf("%d frames, gdb has %d: %v", len(st), depth, st)
	}
	sym := nmSym(t, bin, fn)
	for i := 0; i < depth; i++ {
		fs := strings.Fields(st[i])
		g := gdb[i]
		switch kind {
		case "bt":
			if fs[0] != g.Name {
				return fmt.Errorf("frame %d is %s, gdb says %s", i, st[i], g.Name)
			}
		case "bt-lines":
			if fs[0] != g.Name || len(fs) < 2 {
				return fmt.Errorf("frame %d is %s, gdb says %s", i, st[i], g.Name)
			}
			want := fmt.Sprintf("%s:%d", g.File, g.Line)
			if i == 0 {
				want = addr2line(t, bin, sym.addr)
			}
			if filepath.Base(fs[1]) != filepath.Base(want) {
				return fmt.Errorf("frame %d at %s, want %s", i, fs[1], want)
			}
		case "bt-raw", "bt-buildid":
			a := fs[0]
			if kind == "bt-buildid" {
				id, off, ok := strings.Cut(a, "+")
				if !ok || id != readelfBuildID(t, bin) {
					return fmt.Errorf("frame %d is %s, the build-id is %s", i, a, readelfBuildID(t, bin))
				}
				a = off
			}
			v, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
			if err != nil {
				return fmt.Errorf("frame %d: %q is no address", i, st[i])
			}
			if kind == "bt-raw" {
				v -= pieBase
			}
			// Frame 0 is the probe's address inside fn; the others
			// return addresses, as gdb's.
			if i == 0 && (v < sym.addr || v >= sym.addr+sym.size) {
				return fmt.Errorf("frame 0 at %#x, outside %s [%#x, %#x)", v, fn, sym.addr, sym.addr+sym.size)
			}
			if i > 0 && v+pieBase != g.Addr {
				return fmt.Errorf("frame %d at %#x, gdb says %#x", i, v+pieBase, g.Addr)
			}
		}
	}
	return nil
}

func addr2line(t *testing.T, bin string, addr uint64) string {
	t.Helper()
	out, err := exec.Command("addr2line", "-e", bin, fmt.Sprintf("%#x", addr)).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// inlineAsAddr2line: the stack at a USDT probe inside inline expansions
// begins with the inline chain addr2line -i gives for the probe's
// address (readelf's note), innermost first.
func inlineAsAddr2line(t *testing.T, bin, arg string, evs []btEvent) error {
	parts := strings.Split(arg, ":")
	probe := parts[1] + ":" + parts[2]
	depth := 0
	if len(parts) > 3 {
		depth, _ = strconv.Atoi(parts[3])
	}
	if len(evs) == 0 || len(evs[0].Stack) == 0 {
		return errors.New("no stack")
	}
	out, _ := exec.Command("readelf", "-n", bin).Output()
	m := regexp.MustCompile(`Name: `+parts[2]+`\s+Location: (0x[0-9a-f]+)`).FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		t.Fatalf("readelf: no note %s", probe)
	}
	var chains [][]string
	for _, loc := range m {
		a2l, err := exec.Command("addr2line", "-i", "-f", "-e", bin, loc[1]).Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(a2l)), "\n")
		var names []string
		for i := 0; i < len(lines); i += 2 {
			names = append(names, lines[i])
		}
		chains = append(chains, names)
	}
	var got []string
	for _, f := range evs[0].Stack {
		got = append(got, strings.Fields(f)[0])
	}
	if depth > 0 && len(got) > depth+2 {
		return fmt.Errorf("%d frames at depth %d: %v", len(got), depth, got)
	}
	for _, ch := range chains {
		if len(got) >= len(ch) && strings.Join(got[:len(ch)], " ") == strings.Join(ch, " ") {
			return nil
		}
	}
	return fmt.Errorf("stack %v begins with none of addr2line's inline chains %v", got, chains)
}

// globalsAsGDB: globals read as values are the values gdb prints from
// the file.
func globalsAsGDB(t *testing.T, bin string, evs []btEvent) error {
	if len(evs) == 0 {
		return errors.New("no events")
	}
	for k, v := range evs[0].Args {
		out, err := exec.Command("gdb", "-batch", "-ex", "print (long)"+k, bin).Output()
		if err != nil {
			t.Fatalf("gdb: %v", err)
		}
		want := strings.TrimSpace(string(out))
		if i := strings.Index(want, "= "); i >= 0 {
			want = want[i+2:]
		}
		if v != want {
			return fmt.Errorf("%s=%s, gdb says %s", k, v, want)
		}
	}
	return nil
}

// eventAddrs are the addresses of trace --json's events.
func eventAddrs(out string) []string {
	var addrs []string
	for _, l := range strings.Split(out, "\n") {
		var ev struct{ Addr string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Addr != "" {
			addrs = append(addrs, ev.Addr)
		}
	}
	return addrs
}

// linesAsGDB: every event's address is at the line, as gdb's info line
// says (gdb reads split DWARF and debug links).
func linesAsGDB(t *testing.T, bin string, line int, out string) error {
	addrs := eventAddrs(out)
	for _, a := range addrs {
		g, err := exec.Command("gdb", "-batch", "-ex", "info line *"+a, bin).Output()
		if err != nil {
			t.Fatalf("gdb: %v", err)
		}
		if !strings.Contains(string(g), fmt.Sprintf("Line %d of", line)) {
			return fmt.Errorf("address %s: gdb says %s, want line %d", a, strings.TrimSpace(string(g)), line)
		}
	}
	if len(addrs) == 0 {
		return errors.New("no JSON events")
	}
	return nil
}

// addrAsNm: every event of a raw-address probe is at the address nm gives.
func addrAsNm(out string, addr uint64) error {
	addrs := eventAddrs(out)
	for _, a := range addrs {
		if v, _ := strconv.ParseUint(a, 0, 64); v != addr {
			return fmt.Errorf("event at %s, nm says %#x", a, addr)
		}
	}
	if len(addrs) == 0 {
		return errors.New("no JSON events")
	}
	return nil
}

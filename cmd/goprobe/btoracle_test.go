package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// btEvent is one event of trace's text output: its probe, arguments as
// printed, and stack lines.
type btEvent struct {
	PID   int
	Name  string
	Args  map[string]string
	Keys  []string
	Stack []string
}

var eventLine = regexp.MustCompile(`^(\d+)/\d+ (\S+) site=\S+(.*)$`)

func btEvents(out string) []btEvent {
	var evs []btEvent
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "\t") && len(evs) > 0 {
			evs[len(evs)-1].Stack = append(evs[len(evs)-1].Stack, strings.TrimSpace(l))
			continue
		}
		m := eventLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		keys, args := keyValues(m[3])
		evs = append(evs, btEvent{PID: pid, Name: m[2], Args: args, Keys: keys})
	}
	return evs
}

// keyValues splits "k=v k2="a b" k3={.x = 1}" into its pairs: a value runs
// to the next space outside quotes and braces.
func keyValues(s string) ([]string, map[string]string) {
	m := map[string]string{}
	var keys []string
	s = strings.TrimSpace(s)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		k := s[:eq]
		i, depth, quoted := eq+1, 0, false
		for ; i < len(s); i++ {
			c := s[i]
			if quoted {
				if c == '\\' {
					i++
				} else if c == '"' {
					quoted = false
				}
				continue
			}
			if c == '"' {
				quoted = true
			} else if c == '{' {
				depth++
			} else if c == '}' {
				depth--
			} else if c == ' ' && depth == 0 {
				break
			}
		}
		m[k] = s[eq+1 : i]
		keys = append(keys, k)
		s = strings.TrimSpace(s[i:])
	}
	return keys, m
}

// btRecords are the programs' own "rec NAME k=v ..." lines, by NAME.
func btRecords(out string) map[string][]map[string]string {
	recs := map[string][]map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(l, "rec ")
		if !ok {
			continue
		}
		name, kv, _ := strings.Cut(rest, " ")
		_, m := keyValues(kv)
		recs[name] = append(recs[name], m)
	}
	return recs
}

// matchRecords: every event has a record of its probe holding each of its
// arguments with the value printed.
func matchRecords(evs []btEvent, recs map[string][]map[string]string) error {
	if len(evs) == 0 {
		return errors.New("no events")
	}
	for _, e := range evs {
		name := strings.TrimSuffix(e.Name, "%return")
		rs := recs[name]
		if len(rs) == 0 {
			return fmt.Errorf("event %s: the program recorded no call of it", e.Name)
		}
		found := false
		for _, r := range rs {
			all := true
			for k, v := range e.Args {
				if r[k] != v {
					all = false
					break
				}
			}
			if all {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("event %s %v matches none of the program's records %v", e.Name, e.Args, rs[0])
		}
	}
	return nil
}

type nmEntry struct {
	name       string
	addr, size uint64
}

// nmFuncs are the defined functions of bin (readelf's symbols of type
// FUNC, demangled), by name.
func nmFuncs(t *testing.T, bin string) map[string]nmEntry {
	t.Helper()
	out, err := exec.Command("readelf", "-sW", "-C", bin).Output()
	if err != nil {
		t.Fatalf("readelf -s %s: %v", bin, err)
	}
	m := map[string]nmEntry{}
	for _, l := range strings.Split(string(out), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 8 || fs[3] != "FUNC" || fs[6] == "UND" {
			continue
		}
		e := nmEntry{name: strings.Join(fs[7:], " ")}
		e.name, _, _ = strings.Cut(e.name, "@")
		e.addr, _ = strconv.ParseUint(fs[1], 16, 64)
		e.size, _ = strconv.ParseUint(fs[2], 0, 64)
		m[e.name] = e
	}
	return m
}

func nmSym(t *testing.T, bin, name string) nmEntry {
	t.Helper()
	e, ok := nmFuncs(t, bin)[name]
	if !ok {
		t.Fatalf("nm: no %s in %s", name, bin)
	}
	return e
}

// globMatch is a shell pattern over a whole name ('*' any text, '?' one
// character), as goprobe's and bpftrace's wildcards.
func globMatch(pat, name string) bool {
	ok, _ := path.Match(strings.ReplaceAll(pat, "[", "\\["), strings.ReplaceAll(name, "/", "\x00"))
	return ok
}

// readelfNotes are bin's USDT probes, "provider:name" -> sites.
func readelfNotes(t *testing.T, bin string) map[string]int {
	t.Helper()
	out, err := exec.Command("readelf", "-n", bin).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", bin, err)
	}
	m := map[string]int{}
	prov := ""
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Provider: "); ok {
			prov = v
		} else if v, ok := strings.CutPrefix(l, "Name: "); ok && prov != "" {
			m[prov+":"+v]++
			prov = ""
		}
	}
	return m
}

// statRows are stat's probes and their SITES column.
func statRows(out string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		fs := strings.Fields(l)
		if len(fs) == 4 && fs[0] != "PROBE" {
			if n, err := strconv.Atoi(fs[2]); err == nil {
				m[fs[0]] = n
			}
		}
	}
	return m
}

func sameSet(got, want []string) error {
	sort.Strings(got)
	sort.Strings(want)
	if len(want) == 0 {
		return errors.New("the oracle names nothing")
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("got %v, the oracle says %v", got, want)
	}
	return nil
}

// check runs the case's oracle on its run.
func (p *btProgs) check(t *testing.T, c btCase, r *btRun) error {
	t.Helper()
	kind, arg, _ := strings.Cut(c.Oracle, ":")
	bin := func(s string) string { b, _, _ := strings.Cut(s, ":"); return p.path[b] }
	rest := func(s string) string { _, x, _ := strings.Cut(s, ":"); return x }
	switch kind {
	case "err":
		if r.code == 0 {
			return errors.New("exit 0, want an error")
		}
		if !regexp.MustCompile("(?i)" + arg).MatchString(r.errs) {
			return fmt.Errorf("stderr %q does not match %q", r.errs, arg)
		}
		return nil
	}
	if r.code != 0 {
		return fmt.Errorf("exit %d: %s", r.code, strings.TrimSpace(r.errs))
	}
	evs := btEvents(r.out)
	recs := btRecords(r.out + r.records)
	switch kind {
	case "ok":
		return nil
	case "rec":
		return matchRecords(evs, recs)
	case "rec-as":
		from, to, _ := strings.Cut(arg, "=")
		for _, rs := range recs {
			for _, m := range rs {
				if v, ok := m[from]; ok {
					m[to] = v
				}
			}
		}
		return matchRecords(evs, recs)
	case "rec-neg":
		for _, e := range evs {
			if v, _ := strconv.Atoi(e.Args["$retval"]); v >= 0 {
				return fmt.Errorf("event %v passed the filter $retval < 0", e.Args)
			}
		}
		return matchRecords(evs, recs)
	case "rec-gated":
		for _, g := range recs["tally:gated"] {
			if n, _ := strconv.Atoi(g["semaphore"]); n < 1 {
				return fmt.Errorf("the gated branch ran with semaphore %s", g["semaphore"])
			}
		}
		return matchRecords(evs, recs)
	case "rec-json":
		return matchJSON(r.out, recs)
	case "warn", "quiet":
		if said := strings.Contains(r.errs, arg); said != (kind == "warn") {
			return fmt.Errorf("stderr mentions %s: %v (want %v): %s", arg, said, kind == "warn", r.errs)
		}
		return matchRecords(evs, recs)
	case "order":
		return inOrder(c, evs)
	case "nm":
		var want []string
		for n := range nmFuncs(t, bin(arg)) {
			if globMatch(rest(arg), n) {
				want = append(want, n)
			}
		}
		return sameSet(keysOf(statRows(r.out)), want)
	case "notes":
		want, sites := []string{}, 0
		for n, k := range readelfNotes(t, bin(arg)) {
			if globMatch(rest(arg), n) {
				want, sites = append(want, "usdt:"+n), sites+k
			}
		}
		rows, got := statRows(r.out), 0
		for _, n := range rows {
			got += n
		}
		if got != sites {
			return fmt.Errorf("%d sites, readelf has %d notes", got, sites)
		}
		return sameSet(keysOf(rows), want)
	case "notes-files":
		return p.filesAsNotes(t, arg, r.out, recs)
	case "list-nm":
		return listedNm(t, r.out, bin(arg), rest(arg))
	case "list-notes":
		return listedNotes(t, r.out, bin(arg), rest(arg))
	case "proto":
		return protoAsGDB(t, r.out, bin(arg), rest(arg))
	case "bt", "bt-lines", "bt-raw", "bt-buildid":
		return p.stackAsGDB(t, kind, arg, evs)
	case "bt-inline":
		return inlineAsAddr2line(t, bin(arg), rest(arg), evs)
	case "globals":
		return globalsAsGDB(t, bin(arg), evs)
	case "line":
		return linesAsGDB(t, bin(arg), p.lineOf(t, rest(arg)), r.out)
	case "nmaddr":
		return addrAsNm(r.out, nmSym(t, bin(arg), rest(arg)).addr)
	case "hist-sum":
		return histSum(r.out, recs[arg])
	case "hostpid", "onepid", "pids":
		return pidsSaid(kind, arg, r)
	case "multi-link":
		n := 0
		for _, l := range r.linkTypes {
			if l == "uprobe_multi" {
				n++
			}
		}
		if want, _ := strconv.Atoi(arg); n != want {
			return fmt.Errorf("%d uprobe_multi links while attached, want %d (links: %v)", n, want, r.linkTypes)
		}
		return nil
	}
	return fmt.Errorf("unknown oracle %s", c.Oracle)
}

// inOrder: two definitions of one probe fire in the order given, each hit.
func inOrder(c btCase, evs []btEvent) error {
	if len(evs) < 4 {
		return fmt.Errorf("%d events, want 4", len(evs))
	}
	var defs [][]string
	for _, w := range shellWords(c.Command) {
		if fs := strings.Fields(w); len(fs) > 1 && !strings.HasPrefix(w, "-") {
			var args []string
			for _, a := range fs[1:] {
				a, _, _ = strings.Cut(a, ":")
				args = append(args, a)
			}
			defs = append(defs, args)
		}
	}
	for i, e := range evs {
		want := defs[i%len(defs)]
		if strings.Join(e.Keys, " ") != strings.Join(want, " ") {
			return fmt.Errorf("event %d has %v, want the definition %v (given in that order)", i, e.Keys, want)
		}
	}
	return nil
}

// matchJSON: trace --json's arguments, numbers and objects of numbers,
// equal the program's record ("{.m = 2, .n = 3}" for an object).
func matchJSON(out string, recs map[string][]map[string]string) error {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		var ev struct {
			Probe string
			Args  map[string]any
		}
		if json.Unmarshal([]byte(l), &ev) != nil || ev.Args == nil {
			continue
		}
		n++
		name := strings.Fields(ev.Probe)[0]
		found := false
		for _, r := range recs[name] {
			all := true
			for k, v := range ev.Args {
				all = all && jsonAsC(v) == r[k]
			}
			found = found || all
		}
		if !found {
			return fmt.Errorf("%s %v: the program recorded no such call (%v)", name, ev.Args, recs[name])
		}
	}
	if n == 0 {
		return errors.New("no JSON events")
	}
	return nil
}

// jsonAsC spells a JSON value as the program records it: numbers as
// they are, objects as C designated initializers in field order.
func jsonAsC(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case map[string]any:
		var ks []string
		for k := range v {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, "."+k+" = "+jsonAsC(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func histSum(out string, recs []map[string]string) error {
	var h struct {
		Probes []struct {
			Keys []struct {
				Count uint64
				Sum   int64
			}
		}
	}
	i := strings.Index(out, `{"probes"`)
	if i < 0 || json.Unmarshal([]byte(strings.SplitN(out[i:], "\n", 2)[0]), &h) != nil || len(h.Probes) != 1 || len(h.Probes[0].Keys) != 1 {
		return fmt.Errorf("no hist JSON in %q", tail(out))
	}
	var sum int64
	for _, r := range recs {
		v, _ := strconv.ParseInt(r["$retval"], 10, 64)
		sum += v
	}
	k := h.Probes[0].Keys[0]
	if len(recs) < 20 || k.Count != uint64(len(recs)) || k.Sum != sum {
		return fmt.Errorf("count %d sum %d, the program returned %d values summing to %d", k.Count, k.Sum, len(recs), sum)
	}
	return nil
}

func pidsSaid(kind, arg string, r *btRun) error {
	var pids []int
	for _, l := range strings.Split(r.out, "\n") {
		var ev struct{ PID, TID int }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.PID != 0 {
			pids = append(pids, ev.PID)
		}
	}
	if len(pids) == 0 {
		return errors.New("no JSON events")
	}
	distinct := map[int]bool{}
	for _, p := range pids {
		distinct[p] = true
	}
	switch kind {
	case "pids":
		if want, _ := strconv.Atoi(arg); len(distinct) < want {
			return fmt.Errorf("events of %d processes, want %d", len(distinct), want)
		}
	default:
		var target int
		for k, p := range r.pids {
			if strings.HasPrefix(k, "pid:") || strings.HasPrefix(k, "pidns:") {
				target = p
			}
		}
		if len(distinct) != 1 || !distinct[target] || target == 1 {
			return fmt.Errorf("events of pids %v, want only %d (the process as the host sees it)", keysOf(map[string]bool{fmt.Sprint(pids): true}), target)
		}
	}
	return nil
}

// filesAsNotes checks stat over a pattern of files, arg RAN:GLOB:PATTERN
// (marks:mark*:*:hit2): one row FILE:usdt:NOTE for each file GLOB names
// in the builds' directory and each of its notes (readelf) PATTERN
// matches, with readelf's count of sites; the rows of RAN, the program
// the case runs, counted at most what its records say and some, the
// other files' nothing.
func (p *btProgs) filesAsNotes(t *testing.T, arg, out string, recs map[string][]map[string]string) error {
	ran, rest, _ := strings.Cut(arg, ":")
	glob, pat, _ := strings.Cut(rest, ":")
	files, _ := filepath.Glob(filepath.Join(p.base, glob))
	if len(files) < 2 {
		return fmt.Errorf("%s names %d files, want 2 or more", glob, len(files))
	}
	type row struct{ count, sites int }
	got := map[string]row{}
	for _, l := range strings.Split(out, "\n") {
		fs := strings.Fields(l)
		if len(fs) != 4 || fs[0] == "PROBE" {
			continue
		}
		c, err1 := strconv.Atoi(fs[1])
		n, err2 := strconv.Atoi(fs[2])
		if err1 == nil && err2 == nil {
			got[fs[0]] = row{c, n}
		}
	}
	want, ranHits := []string{}, 0
	for _, f := range files {
		for n, k := range readelfNotes(t, f) {
			if !globMatch(pat, n) {
				continue
			}
			key := f + ":usdt:" + n
			want = append(want, key)
			g, ok := got[key]
			switch {
			case !ok:
				continue // sameSet says
			case g.sites != k:
				return fmt.Errorf("%s: %d sites, readelf has %d notes", key, g.sites, k)
			case f != p.path[ran] && g.count != 0:
				return fmt.Errorf("%s: %d hits, and no process ran %s", key, g.count, f)
			case g.count > len(recs[n]):
				return fmt.Errorf("%s: %d hits, the program recorded %d", key, g.count, len(recs[n]))
			}
			if f == p.path[ran] {
				ranHits += g.count
			}
		}
	}
	if ranHits == 0 {
		return fmt.Errorf("no hits in %s, which ran", p.path[ran])
	}
	return sameSet(keysOf(got), want)
}

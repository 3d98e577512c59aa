package gen

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
)

// perfCount counts each function's calls with perf probe: one event per
// function (perf places it at the out-of-line entry and at the inline
// expansions it finds), counted with perf stat. A function perf probe
// refuses keeps -1.
func perfCount(bin, dir string, nargs []string, res *Result) {
	group := fmt.Sprintf("gen%dx%d", os.Getpid(), perfGroups.Add(1)) // one per run: runs may overlap
	defer exec.Command("perf", "probe", "-q", "-d", group+":*").Run()
	events := map[string]*FuncResult{}
	for i, fr := range res.Funcs {
		ev := fmt.Sprintf("e%02d", i)
		if err := exec.Command("perf", "probe", "-q", "-x", bin, "-a", group+":"+ev+"="+fr.Symbol).Run(); err != nil {
			continue
		}
		events[ev] = fr
		fr.Perf = 0
	}
	if len(events) == 0 {
		return
	}
	args := append([]string{"stat", "-x,", "-e", group + ":*", "--", bin}, nargs...)
	cmd := exec.Command("perf", append(args, dir+"/perf.rec")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		for _, fr := range events {
			fr.Perf = -1
		}
		return
	}
	// "135,,gen123:e10,3791372,100.00,,": every site of an event has its
	// name (older perf: e10_1, e10_2...).
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if len(fs) < 3 {
			continue
		}
		n, err := strconv.Atoi(fs[0])
		if err != nil {
			continue
		}
		ev := strings.TrimPrefix(fs[2], group+":")
		if i := strings.IndexByte(ev, '_'); i >= 0 {
			ev = ev[:i]
		}
		if fr := events[ev]; fr != nil {
			fr.Perf += n
		}
	}
}

// perfGroups numbers perfCount's event groups.
var perfGroups atomic.Int64

var bpftraceLine = regexp.MustCompile(`^@\[uprobe:[^:]*:(.*)\]: (\d+)$`)

// bpftraceCount counts each function's calls with bpftrace on its symbols:
// its own and its full clones' (.constprop, .isra; not .part or .cold,
// which are not calls). A function without a symbol (inlined everywhere)
// keeps -1.
func bpftraceCount(bin, dir string, nargs []string, res *Result, lang Lang) {
	f, err := elf.Open(bin)
	if err != nil {
		return
	}
	syms, _ := f.Symbols()
	f.Close()
	owner := map[string]*FuncResult{}
	var script strings.Builder
	for _, fr := range res.Funcs {
		for _, s := range symbolsOf(syms, fr, lang) {
			if strings.Contains(s, ".part") || strings.Contains(s, ".cold") {
				continue
			}
			if owner[s] != nil {
				continue
			}
			owner[s] = fr
			fr.Bpftrace = 0
			fmt.Fprintf(&script, "uprobe:%s:\"%s\" { @[probe] = count(); }\n", bin, s)
		}
	}
	if len(owner) == 0 {
		return
	}
	sf := dir + "/count.bt"
	if err := os.WriteFile(sf, []byte(script.String()), 0o644); err != nil {
		return
	}
	run := bin + " " + strings.Join(nargs, " ") + " " + dir + "/bpftrace.rec"
	out, err := exec.Command("bpftrace", sf, "-c", run).CombinedOutput()
	if err != nil {
		for _, fr := range owner {
			fr.Bpftrace = -1
		}
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := bpftraceLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if fr := owner[strings.Trim(m[1], `"`)]; fr != nil {
			fr.Bpftrace += n
		}
	}
}

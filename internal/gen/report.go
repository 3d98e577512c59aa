package gen

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Class names what went wrong with goprobe's count of a function, or "".
func (fr *FuncResult) Class() string {
	switch {
	case fr.GoprobeErr != "":
		if fr.Want == 0 {
			return ""
		}
		return "not-probed"
	case fr.Goprobe < fr.Want:
		return "missed"
	case fr.Goprobe > fr.Want:
		return "extra"
	case fr.Trace != fr.TraceWant:
		return "trace-count"
	}
	return ""
}

func exact(count, want int) bool { return count == want || (count < 0 && want == 0) }

// Summary is one build's figures over its programs.
type Summary struct {
	Build                          string
	Programs, Funcs                int
	Goprobe, Perf, Bpftrace        int // functions counted exactly
	Values, Wrong, Unreadable      int
	PerfTried, BpftraceTried       bool
	GoprobeMissed, GoprobeExtra    int // functions
	GoprobeNotProbed, TraceUnequal int
	// Calls the programs recorded; of them, those goprobe stat or
	// trace counted more than once (the counts above the record) and
	// those they did not count (below it, or not probed).
	Calls, Doubles, Misses int
	// UnreadPairs counts the (site, argument) pairs printed as ? at
	// least once: what gdb is asked about with every pair (GDB=all).
	UnreadPairs int
	// Reordered counts the events that fired before an earlier call's,
	// each judged against its own call (see callPairing).
	Reordered int
	// Failed counts the programs that did not build, run, or run to
	// their end under goprobe: none of their calls and values is in the
	// figures above, so a row says how many there were.
	Failed int
}

// Summarize adds up results per build, in the order of Builds.
func Summarize(rs []*Result) []*Summary {
	by := map[string]*Summary{}
	for _, r := range rs {
		s := by[r.Build]
		if s == nil {
			s = &Summary{Build: r.Build}
			by[r.Build] = s
		}
		s.Programs++
		for _, fr := range r.Funcs {
			s.Funcs++
			if fr.Class() == "" {
				s.Goprobe++
			}
			switch fr.Class() {
			case "missed":
				s.GoprobeMissed++
			case "extra":
				s.GoprobeExtra++
			case "not-probed":
				s.GoprobeNotProbed++
			case "trace-count":
				s.TraceUnequal++
			}
			if exact(fr.Perf, fr.Want) {
				s.Perf++
			}
			if exact(fr.Bpftrace, fr.Want) {
				s.Bpftrace++
			}
			if fr.Perf >= 0 {
				s.PerfTried = true
			}
			if fr.Bpftrace >= 0 {
				s.BpftraceTried = true
			}
			s.Calls += fr.Want
			if fr.GoprobeErr != "" {
				s.Misses += fr.Want
			} else {
				s.Doubles += max(0, fr.Goprobe-fr.Want) + max(0, fr.Trace-fr.TraceWant)
				s.Misses += max(0, fr.Want-fr.Goprobe) + max(0, fr.TraceWant-fr.Trace)
			}
			s.Values += fr.Values
			s.Wrong += fr.Wrong
			s.Unreadable += fr.Unreadable
			s.UnreadPairs += len(fr.UnreadAt)
			s.Reordered += fr.Reordered
		}
	}
	return inBuildOrder(by)
}

// AddFailed adds to ss the programs of each build that failed (failed by
// build name): a build all of whose programs failed gets a row too.
func AddFailed(ss []*Summary, failed map[string]int) []*Summary {
	by := map[string]*Summary{}
	for _, s := range ss {
		by[s.Build] = s
	}
	for b, n := range failed {
		if n > 0 && by[b] == nil {
			by[b] = &Summary{Build: b}
		}
		if by[b] != nil {
			by[b].Failed += n
		}
	}
	return inBuildOrder(by)
}

func inBuildOrder(by map[string]*Summary) []*Summary {
	var out []*Summary
	for _, b := range Builds {
		if s := by[b.Name]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// WriteTable prints the summaries as a Markdown table.
func WriteTable(w io.Writer, ss []*Summary) {
	fmt.Fprintln(w, "| build | programs | functions | goprobe exact | perf probe exact | bpftrace exact | goprobe missed/extra/not probed | goprobe wrong values | goprobe `?` |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, s := range ss {
		perf, bt := pct(s.Perf, s.Funcs), pct(s.Bpftrace, s.Funcs)
		if !s.PerfTried {
			perf = "n/a"
		}
		if !s.BpftraceTried {
			bt = "n/a"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %d/%d/%d | %d of %d | %s |\n", s.Build, s.Programs, s.Funcs,
			pct(s.Goprobe, s.Funcs), perf, bt, s.GoprobeMissed, s.GoprobeExtra, s.GoprobeNotProbed,
			s.Wrong, s.Values, pct(s.Unreadable, s.Values))
	}
}

// WriteSummary prints one line per build: its programs, functions and
// calls, the calls goprobe counted twice or missed (stat's and trace's
// runs together), the values it printed wrong, the ? and, where gdb was
// asked (gdbs by build; nil: not asked), how gdb stopped at the same
// sites compares.
func WriteSummary(w io.Writer, ss []*Summary, gdbs map[string]*GDBCheck) {
	for _, s := range ss {
		fmt.Fprintf(w, "exact %s: %d seeds, %d functions, %d calls: %d counted twice, %d missed, %d wrong values of %d, %d ?",
			s.Build, s.Programs, s.Funcs, s.Calls, s.Doubles, s.Misses, s.Wrong, s.Values, s.Unreadable)
		if s.Failed > 0 {
			fmt.Fprintf(w, " (%d programs failed and are not counted: see the errors above)", s.Failed)
		}
		if s.Reordered > 0 {
			fmt.Fprintf(w, " (%d events before an earlier call's, judged against their own)", s.Reordered)
		}
		if g := gdbs[s.Build]; g != nil {
			fmt.Fprintf(w, " (gdb at %d of them: %d no value either, %d a value no call passed, %d a value, %d no stop)",
				g.Compared()+len(g.NoStop), g.Agree, len(g.GDBWrong), len(g.Differ), len(g.NoStop))
		}
		fmt.Fprintln(w)
	}
}

// WriteRows prints one tab-separated row per build for bench/readme.sh:
// build, seeds, functions, calls, calls counted twice, calls missed, wrong
// values, values, ?, and of the ? gdb was run at: compared, no value
// either, a value no call passed, a value, no stop (- when gdb was not
// asked); then the events that fired before an earlier call's and the
// programs that failed.
func WriteRows(w io.Writer, ss []*Summary, gdbs map[string]*GDBCheck) {
	for _, s := range ss {
		g := "-\t-\t-\t-\t-"
		if c := gdbs[s.Build]; c != nil {
			g = fmt.Sprintf("%d\t%d\t%d\t%d\t%d", c.Compared(), c.Agree, len(c.GDBWrong), len(c.Differ), len(c.NoStop))
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\n", s.Build, s.Programs, s.Funcs, s.Calls, s.Doubles, s.Misses,
			s.Wrong, s.Values, s.Unreadable, g, s.Reordered, s.Failed)
	}
}

// WriteGDB prints the comparison of the ? with gdb, per build in order,
// as a Markdown table, then each ? gdb printed a value for.
func WriteGDB(w io.Writer, order []string, gdbs map[string]*GDBCheck) {
	fmt.Fprintln(w, "| build | `?` compared with gdb | gdb has no value either | gdb prints a value no call passed | gdb prints a value | gdb made no stop |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, b := range order {
		g := gdbs[b]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d |\n", b, g.Compared(), g.Agree, len(g.GDBWrong), len(g.Differ), len(g.NoStop))
	}
	for _, b := range order {
		for _, d := range gdbs[b].GDBWrong {
			fmt.Fprintln(w, d)
		}
		for _, d := range gdbs[b].Differ {
			fmt.Fprintln(w, d)
		}
		for _, d := range gdbs[b].NoStop {
			fmt.Fprintln(w, d)
		}
	}
}

// WriteFailures lists every function goprobe did not count exactly or
// printed a wrong value for, with its shape and sites.
func WriteFailures(w io.Writer, rs []*Result) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Build < rs[j].Build })
	for _, r := range rs {
		for _, fr := range r.Funcs {
			c := fr.Class()
			if c == "" && fr.Wrong == 0 && fr.CallWrong == 0 {
				if fr.Reordered > 0 {
					fmt.Fprintf(w, "%s seed=%d %s kind=%s shape=%s: in order of their call sites, %d events fired before an earlier call's\n\tsites: %s\n",
						r.Build, r.Seed, fr.Symbol, fr.Kind, fr.Shape, fr.Reordered, fr.Sites)
				}
				continue
			}
			if c == "" {
				c = "values"
			}
			fmt.Fprintf(w, "%s seed=%d %s kind=%s shape=%s: %s want=%d goprobe=%d trace=%d/%d perf=%d bpftrace=%d",
				r.Build, r.Seed, fr.Symbol, fr.Kind, fr.Shape, c, fr.Want, fr.Goprobe, fr.Trace, fr.TraceWant, fr.Perf, fr.Bpftrace)
			if fr.Surplus > 0 {
				fmt.Fprintf(w, " surplus=%d", fr.Surplus)
			}
			if fr.Wrong > 0 {
				fmt.Fprintf(w, " wrong=%d/%d e.g. %s", fr.Wrong, fr.Values, fr.WrongEx)
			}
			if fr.Reordered > 0 {
				fmt.Fprintf(w, " out-of-order=%d", fr.Reordered)
			}
			if fr.GoprobeErr != "" {
				fmt.Fprintf(w, " err=%q", firstLine(fr.GoprobeErr))
			}
			if fr.CallWrong > 0 {
				fmt.Fprintf(w, " not-the-call's=%d:", fr.CallWrong)
				for _, ex := range fr.wrongAtEx {
					k, _, _ := strings.Cut(ex, " (")
					fmt.Fprintf(w, " %d× at %s;", fr.WrongAt[k], ex)
				}
			}
			fmt.Fprintf(w, "\n\tsites: %s\n", fr.Sites)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

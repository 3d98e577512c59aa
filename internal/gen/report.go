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
			s.Values += fr.Values
			s.Wrong += fr.Wrong
			s.Unreadable += fr.Unreadable
		}
	}
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

// WriteFailures lists every function goprobe did not count exactly or
// printed a wrong value for, with its shape and sites.
func WriteFailures(w io.Writer, rs []*Result) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Build < rs[j].Build })
	for _, r := range rs {
		for _, fr := range r.Funcs {
			c := fr.Class()
			if c == "" && fr.Wrong == 0 {
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
			if fr.GoprobeErr != "" {
				fmt.Fprintf(w, " err=%q", firstLine(fr.GoprobeErr))
			}
			fmt.Fprintf(w, "\n\tsites: %s\n", fr.Sites)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Command exact runs the truth machine: generated self-recording programs,
// built by each compiler, probed with goprobe, perf probe and bpftrace, and
// compared with each program's record of its own calls (internal/gen).
//
//	go run ./bench/exact -goprobe bin/goprobe -seeds 1-20 -builds gcc-O2,go -n 20
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/binscope/binscope/internal/gen"
)

func main() {
	goprobe := flag.String("goprobe", "bin/goprobe", "the goprobe binary")
	seeds := flag.String("seeds", "1-5", "seeds: a range A-B or a comma list")
	builds := flag.String("builds", "gcc-O2,gcc-O3,clang-O2,go,rust-O3,zig-fast", "builds, comma-separated")
	emit := flag.String("emit", "", "print the source of one seed in this language (c, go, rust, zig) and exit")
	buildOnly := flag.Bool("build-only", false, "build the programs in -dir and print a line for each: build, seed, path, then each function's symbol (tab-separated); probe nothing")
	var o options
	flag.IntVar(&o.n, "n", 20, "how many times main calls each root")
	peers := flag.Bool("peers", true, "count with perf probe and bpftrace too")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "binscope-exact"), "where programs are built")
	flag.BoolVar(&o.failures, "failures", true, "list each function goprobe got wrong")
	flag.BoolVar(&o.unread, "unread", false, "list each argument goprobe printed as ?, per site, with the reason")
	flag.DurationVar(&o.budget, "for", 0, "start no program after this long (0: run every seed)")
	flag.IntVar(&o.gdbMax, "gdb", 0, "per program, compare up to this many arguments printed as ? with gdb stopped at the same site (-1: every one; 0: none)")
	flag.StringVar(&o.rows, "rows", "", "write the summary, one tab-separated row per build, to this file (for bench/readme.sh)")
	flag.IntVar(&o.jobs, "j", 1, "how many seeds to run at a time")
	flag.BoolVar(&o.guard, "guard", true, "turn about half the static functions into guarded ones (an early return, a heavy tail: GCC's partial inlining)")
	flag.Parse()

	ss, err := parseSeeds(*seeds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exact:", err)
		os.Exit(2)
	}
	if *emit != "" {
		fmt.Print(program(ss[0], o.guard).Source(gen.Lang(*emit)))
		return
	}
	abs, err := filepath.Abs(*goprobe)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exact:", err)
		os.Exit(2)
	}
	o.tools = gen.Tools{Goprobe: abs, Perf: *peers, Bpftrace: *peers}
	for _, name := range strings.Split(*builds, ",") {
		b, ok := gen.BuildNamed(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "exact: no build %q\n", name)
			os.Exit(2)
		}
		o.builds = append(o.builds, b)
	}
	if *buildOnly {
		os.Exit(buildAll(&o, ss))
	}
	r := run(&o, ss)
	r.report(&o)
	fmt.Fprintf(os.Stderr, "exact: time per step over %d programs: %s\n", len(r.results), steps(r.steps))
	for _, n := range r.failed {
		if n > 0 {
			os.Exit(1) // the rows are written, with the programs that failed
		}
	}
	if !r.allJudged {
		os.Exit(1)
	}
}

// options are the flags a run goes by.
type options struct {
	builds   []gen.Build
	tools    gen.Tools
	n        int
	dir      string
	failures bool
	unread   bool
	budget   time.Duration
	gdbMax   int
	rows     string
	guard    bool
	jobs     int
}

// runs are what the programs gave: their results, gdb's verdicts per
// build (in the order the builds first had one), the programs of each
// build that failed to build or run.
type runs struct {
	results  []*gen.Result
	gdbs     map[string]*gen.GDBCheck
	gdbOrder []string
	failed   map[string]int
	steps    map[string]time.Duration // wall time per step, over the programs
	// allJudged is false when gdb, asked about every ? pair, left some
	// without a verdict.
	allJudged bool
	mu        sync.Mutex // for the above, with several jobs
}

// run builds and probes every build of each seed, seed by seed, o.jobs
// seeds at a time: a run stopped early (-for, SIGINT, SIGTERM) has about
// as many programs of each build.
func run(o *options, seeds []int64) *runs {
	rs := &runs{gdbs: map[string]*gen.GDBCheck{}, failed: map[string]int{}, steps: map[string]time.Duration{}}
	stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	deadline := time.Now().Add(o.budget)
	var mu sync.Mutex
	next := 0
	// take hands out the next seed, or says there is none to start.
	take := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next < len(seeds) && (stop.Err() != nil || o.budget > 0 && time.Now().After(deadline)) {
			fmt.Fprintf(os.Stderr, "exact: stopped before seed %d\n", seeds[next])
			next = len(seeds)
		}
		if next == len(seeds) {
			return 0, false
		}
		next++
		return seeds[next-1], true
	}
	var wg sync.WaitGroup
	for range max(1, o.jobs) {
		wg.Go(func() {
			for seed, ok := take(); ok; seed, ok = take() {
				for _, b := range o.builds {
					rs.one(o, seed, b)
				}
			}
		})
	}
	wg.Wait()
	return rs
}

// one builds and probes the program of seed with build b.
func (rs *runs) one(o *options, seed int64, b gen.Build) {
	p := program(seed, o.guard)
	r, err := gen.Run(p, b, filepath.Join(o.dir, fmt.Sprintf("%s-%d", b.Name, seed)), min(o.n, p.MaxN()), o.tools)
	var c gen.GDBCheck
	var gdbErr error
	if err == nil && o.gdbMax != 0 {
		t0 := time.Now()
		c, gdbErr = r.CheckUnread(o.gdbMax)
		r.Steps["gdb"] += time.Since(t0)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if err != nil {
		fmt.Fprintf(os.Stderr, "exact: %s seed %d: %v\n", b.Name, seed, err)
		rs.failed[b.Name]++
		return
	}
	rs.results = append(rs.results, r)
	if o.gdbMax != 0 {
		if gdbErr != nil {
			fmt.Fprintf(os.Stderr, "exact: %s seed %d: gdb: %v\n", b.Name, seed, gdbErr)
		}
		if rs.gdbs[b.Name] == nil {
			rs.gdbs[b.Name] = &gen.GDBCheck{}
			rs.gdbOrder = append(rs.gdbOrder, b.Name)
		}
		rs.gdbs[b.Name].Add(c)
		for _, d := range slices.Concat(c.GDBWrong, c.Differ, c.NoStop) {
			fmt.Fprintln(os.Stderr, d)
		}
	}
	for k, d := range r.Steps {
		rs.steps[k] += d
	}
	fmt.Fprintf(os.Stderr, "%s seed %d: done (%s)\n", b.Name, seed, steps(r.Steps))
	gen.WriteFailures(os.Stderr, []*gen.Result{r}) // as they come, for a long run
}

// report prints the summary, the table, the reasons and what the flags
// ask for, and writes the rows file.
func (rs *runs) report(o *options) {
	sums := gen.AddFailed(gen.Summarize(rs.results), rs.failed)
	gen.WriteSummary(os.Stdout, sums, rs.gdbs)
	rs.allJudged = true
	for _, s := range sums {
		// With every pair asked for, gdb's verdicts cover every ?
		// pair: judged, or no stop.
		g := rs.gdbs[s.Build]
		if o.gdbMax < 0 && s.UnreadPairs > 0 && (g == nil || g.Compared()+len(g.NoStop) != s.UnreadPairs) {
			n := 0
			if g != nil {
				n = g.Compared() + len(g.NoStop)
			}
			fmt.Printf("exact %s: gdb gave a verdict on %d of the %d (site, argument) pairs printed as ?\n", s.Build, n, s.UnreadPairs)
			rs.allJudged = false
		}
	}
	if o.rows != "" {
		var buf bytes.Buffer
		gen.WriteRows(&buf, sums, rs.gdbs)
		if err := os.WriteFile(o.rows, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "exact:", err)
			os.Exit(1)
		}
	}
	fmt.Println()
	gen.WriteTable(os.Stdout, sums)
	fmt.Println()
	gen.WriteReasons(os.Stdout, rs.results)
	if o.gdbMax != 0 {
		fmt.Println()
		gen.WriteGDB(os.Stdout, rs.gdbOrder, rs.gdbs)
	}
	if o.unread {
		fmt.Println()
		gen.WriteUnread(os.Stdout, rs.results)
	}
	if o.failures {
		fmt.Println()
		gen.WriteFailures(os.Stdout, rs.results)
	}
}

// buildAll builds every build of each seed, as run would, and prints a
// line per program: build, seed, its path, its functions' symbols. It
// returns the exit status: 1 when one failed to build.
func buildAll(o *options, seeds []int64) int {
	st := 0
	for _, seed := range seeds {
		p := program(seed, o.guard)
		for _, b := range o.builds {
			bin, err := b.Make(p, filepath.Join(o.dir, fmt.Sprintf("%s-%d", b.Name, seed)))
			if err != nil {
				fmt.Fprintf(os.Stderr, "exact: %s seed %d: %v\n", b.Name, seed, err)
				st = 1
				continue
			}
			fields := []string{b.Name, strconv.FormatInt(seed, 10), bin}
			for _, f := range p.Funcs {
				fields = append(fields, p.Symbol(b.Lang, f))
			}
			fmt.Println(strings.Join(fields, "\t"))
		}
	}
	return st
}

func program(seed int64, guard bool) *gen.Program {
	if guard {
		return gen.Generate(seed).Guarded()
	}
	return gen.Generate(seed)
}

func parseSeeds(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		x, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, err
		}
		y := x
		if isRange {
			if y, err = strconv.ParseInt(b, 10, 64); err != nil {
				return nil, err
			}
		}
		for i := x; i <= y; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// steps prints a run's time per step, in the order the steps run.
func steps(m map[string]time.Duration) string {
	var b strings.Builder
	for _, k := range []string{"build", "run", "shapes", "sites", "stat", "trace", "perf", "bpftrace", "gdb"} {
		if d, ok := m[k]; ok {
			fmt.Fprintf(&b, " %s %.2fs", k, d.Seconds())
		}
	}
	return strings.TrimSpace(b.String())
}

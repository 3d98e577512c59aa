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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/binscope/binscope/internal/gen"
)

func main() {
	goprobe := flag.String("goprobe", "bin/goprobe", "the goprobe binary")
	seeds := flag.String("seeds", "1-5", "seeds: a range A-B or a comma list")
	builds := flag.String("builds", "gcc-O2,gcc-O3,clang-O2,go,rust-O3,zig-fast", "builds, comma-separated")
	n := flag.Int("n", 20, "how many times main calls each root")
	peers := flag.Bool("peers", true, "count with perf probe and bpftrace too")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "binscope-exact"), "where programs are built")
	emit := flag.String("emit", "", "print the source of one seed in this language (c, go, rust, zig) and exit")
	failures := flag.Bool("failures", true, "list each function goprobe got wrong")
	unread := flag.Bool("unread", false, "list each argument goprobe printed as ?, per site, with the reason")
	budget := flag.Duration("for", 0, "start no program after this long (0: run every seed)")
	gdbMax := flag.Int("gdb", 0, "per program, compare up to this many arguments printed as ? with gdb stopped at the same site")
	rows := flag.String("rows", "", "write the summary, one tab-separated row per build, to this file (for bench/readme.sh)")
	guard := flag.Bool("guard", true, "turn about half the static functions into guarded ones (an early return, a heavy tail: GCC's partial inlining)")
	flag.Parse()

	ss, err := parseSeeds(*seeds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exact:", err)
		os.Exit(2)
	}
	if *emit != "" {
		fmt.Print(program(ss[0], *guard).Source(gen.Lang(*emit)))
		return
	}
	abs, err := filepath.Abs(*goprobe)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exact:", err)
		os.Exit(2)
	}
	tools := gen.Tools{Goprobe: abs, Perf: *peers, Bpftrace: *peers}
	var results []*gen.Result
	gdbs := map[string]*gen.GDBCheck{}
	var gdbOrder []string
	failed := map[string]int{}
	var bs []gen.Build
	for _, name := range strings.Split(*builds, ",") {
		b, ok := gen.BuildNamed(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "exact: no build %q\n", name)
			os.Exit(2)
		}
		bs = append(bs, b)
	}
	// Seed by seed, every build of each: a run stopped early (-for,
	// SIGINT, SIGTERM) has about as many programs of each build.
	stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	deadline := time.Now().Add(*budget)
	for _, seed := range ss {
		if stop.Err() != nil || *budget > 0 && time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "exact: stopped before seed %d\n", seed)
			break
		}
		for _, b := range bs {
			p := program(seed, *guard)
			r, err := gen.Run(p, b, filepath.Join(*dir, fmt.Sprintf("%s-%d", b.Name, seed)), min(*n, p.MaxN()), tools)
			if err != nil {
				fmt.Fprintf(os.Stderr, "exact: %s seed %d: %v\n", b.Name, seed, err)
				failed[b.Name]++
				continue
			}
			results = append(results, r)
			if *gdbMax > 0 {
				c, err := r.CheckUnread(filepath.Join(*dir, fmt.Sprintf("%s-%d", b.Name, seed)), *gdbMax)
				if err != nil {
					fmt.Fprintf(os.Stderr, "exact: %s seed %d: gdb: %v\n", b.Name, seed, err)
				}
				if gdbs[b.Name] == nil {
					gdbs[b.Name] = &gen.GDBCheck{}
					gdbOrder = append(gdbOrder, b.Name)
				}
				gdbs[b.Name].Add(c)
				for _, d := range append(c.GDBWrong, c.Differ...) {
					fmt.Fprintln(os.Stderr, d)
				}
			}
			fmt.Fprintf(os.Stderr, "%s seed %d: done\n", b.Name, seed)
			gen.WriteFailures(os.Stderr, []*gen.Result{r}) // as they come, for a long run
		}
	}
	sums := gen.Summarize(results)
	gen.WriteSummary(os.Stdout, sums, gdbs)
	if *rows != "" {
		var buf bytes.Buffer
		gen.WriteRows(&buf, sums, gdbs)
		if err := os.WriteFile(*rows, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "exact:", err)
			os.Exit(1)
		}
	}
	for _, b := range bs {
		if failed[b.Name] > 0 {
			fmt.Printf("exact %s: %d programs failed to build or run (see the errors above)\n", b.Name, failed[b.Name])
		}
	}
	fmt.Println()
	gen.WriteTable(os.Stdout, sums)
	fmt.Println()
	gen.WriteReasons(os.Stdout, results)
	if *gdbMax > 0 {
		fmt.Println()
		gen.WriteGDB(os.Stdout, gdbOrder, gdbs)
	}
	if *unread {
		fmt.Println()
		gen.WriteUnread(os.Stdout, results)
	}
	if *failures {
		fmt.Println()
		gen.WriteFailures(os.Stdout, results)
	}
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

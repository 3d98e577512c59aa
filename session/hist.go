package cli

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/probe"
)

type histFlags struct {
	traceFlags
	key, value string
	interval   time.Duration
}

func histCommand(stdout, stderr io.Writer) *cobra.Command {
	var f histFlags
	cmd := &cobra.Command{
		Use:   "hist --key EXPR [--value EXPR] [flags] 'PROBE'... [-- CMD ARGS...]",
		Short: "Count hits per key in the kernel, with the sum and log2 histogram of a value",
		Long: `goprobe hist aggregates in the kernel, as ftrace's hist triggers do: each hit of a
probe adds one to the count of its key (--key, an argument expression read at
the hit) and, with --value, the value to the key's sum and log2 histogram. The
table is printed at exit, and every --interval.`,
		Example: `  goprobe hist --key n --value i maybe_alloc -- ./prog 10
  goprobe hist --key c->desc->fqName 'github.com/prometheus/client_golang/prometheus.(*counter).Inc' -- ./app`,
		RunE: func(cmd *cobra.Command, args []string) error {
			defs, run := args, []string(nil)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				defs, run = args[:d], args[d:]
			}
			return runHist(&f, defs, run, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.exe, "exe", "x", "", "the binary to probe (default: CMD's, or /proc/PID/exe)")
	fl.IntVarP(&f.pid, "pid", "p", 0, "probe only this process")
	fl.StringVar(&f.key, "key", "", "the expression to group hits by (required)")
	fl.StringVar(&f.value, "value", "", "an expression to sum and histogram per key")
	fl.DurationVar(&f.interval, "interval", 0, "also print the table at this interval")
	fl.BoolVar(&f.json, "json", false, "print a JSON object")
	addMetricFlags(fl, &f.metrics, true)
	return cmd
}

func runHist(f *histFlags, defs, run []string, stdout, stderr io.Writer) error {
	if f.key == "" {
		return usageError{fmt.Errorf("--key is required")}
	}
	if len(defs) == 0 {
		return usageError{fmt.Errorf("no probe definitions")}
	}
	if err := f.metrics.check(len(defs)); err != nil {
		return err
	}
	// The key and the value are the arguments of every definition.
	var full []string
	for _, d := range defs {
		if len(strings.Fields(d)) > 1 {
			return usageError{fmt.Errorf("%q: hist takes --key and --value, not arguments", d)}
		}
		x := d + " key=" + f.key
		if f.value != "" {
			x += " value=" + f.value
		}
		full = append(full, x)
	}
	target, spec, err := targetSpec(&f.traceFlags, full, run, stderr)
	if err != nil {
		return err
	}
	reportUnavailable(stderr, spec)
	for _, p := range spec.Probes {
		for _, s := range p.Sites {
			for _, a := range s.Args {
				if a.Name == "value" && a.Unavailable == "" && (a.Type == "string" || a.Type == "cstring" || a.Type == "bytes" || a.Type == "iface") {
					return fmt.Errorf("--value %s is text: it must be a number", f.value)
				}
			}
		}
	}
	only := onlyCommand(target, run)
	sess, err := probe.AttachHist(spec, target, &probe.AttachOptions{PID: f.pid, Descendants: only})
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Fprintf(stderr, "goprobe: %d probes attached in %s\n", len(spec.Probes), target)
	if f.metrics.listen != "" {
		stopMetrics, err := f.metrics.serveHist(sess, spec, target, f.key, f.value, stderr)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	if _, isFile := stdout.(*os.File); !isFile { // the command writes there too
		stdout = &lockedWriter{w: stdout}
	}
	out := bufio.NewWriter(stdout)
	print := func() {
		es, err := sess.Hist()
		if err != nil {
			fmt.Fprintf(stderr, "goprobe: %v\n", err)
			return
		}
		writeHist(out, spec, es, f.value != "", f.json)
		out.Flush()
	}
	ro := runOptions{every: f.interval, tick: func() bool { print(); return true }}
	if only {
		ro.gate = &probe.GateHooks{Exec: func(pid int) { sess.SetRoot(pid) }}
	}
	status, err := runOrWait(run, stdout, stderr, ro)
	if err != nil {
		return err
	}
	print()
	if status != 0 {
		return exitStatus(status)
	}
	return nil
}

// bucketRange is the values log2 bucket b counts: [lo, hi).
func bucketRange(b int) (lo, hi uint64) {
	if b == 0 {
		return 0, 1
	}
	if b >= probe.HistBuckets-1 {
		return 1 << (b - 1), 0 // and above
	}
	return 1 << (b - 1), 1 << b
}

func writeHist(w io.Writer, spec *probe.Spec, es []*probe.HistEntry, value, asJSON bool) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Probe != es[j].Probe {
			return es[i].Probe < es[j].Probe
		}
		if es[i].Count != es[j].Count {
			return es[i].Count > es[j].Count
		}
		return es[i].Key.String() < es[j].Key.String()
	})
	if asJSON {
		type bucket struct {
			From  uint64 `json:"from"`
			To    uint64 `json:"to,omitempty"`
			Count uint64 `json:"count"`
		}
		type key struct {
			Key     any      `json:"key"`
			Count   uint64   `json:"count"`
			Sum     *uint64  `json:"sum,omitempty"`
			Buckets []bucket `json:"buckets,omitempty"`
		}
		type pr struct {
			Probe string `json:"probe"`
			Keys  []key  `json:"keys"`
		}
		var ps []pr
		for i, p := range spec.Probes {
			r := pr{Probe: p.Def, Keys: []key{}}
			for _, e := range es {
				if e.Probe != i {
					continue
				}
				k := key{Key: e.Key.JSONValue(), Count: e.Count}
				if value {
					sum := e.Sum
					k.Sum = &sum
					for b, n := range e.Buckets {
						if n > 0 {
							lo, hi := bucketRange(b)
							k.Buckets = append(k.Buckets, bucket{lo, hi, n})
						}
					}
				}
				r.Keys = append(r.Keys, k)
			}
			ps = append(ps, r)
		}
		b, _ := jsonx.Marshal(struct {
			Probes []pr `json:"probes"`
		}{ps})
		w.Write(append(b, '\n'))
		return
	}
	for i, p := range spec.Probes {
		fmt.Fprintf(w, "%s\n", p.Def)
		t := tablewriter.NewWriter(w)
		if value {
			t.Header("KEY", "COUNT", "SUM", "AVG")
		} else {
			t.Header("KEY", "COUNT")
		}
		for _, e := range es {
			if e.Probe != i {
				continue
			}
			if value {
				avg := float64(e.Sum) / float64(max(e.Count, 1))
				t.Append(e.Key.String(), fmt.Sprint(e.Count), fmt.Sprint(e.Sum), fmt.Sprintf("%.1f", avg))
			} else {
				t.Append(e.Key.String(), fmt.Sprint(e.Count))
			}
		}
		t.Render()
		if !value {
			continue
		}
		for _, e := range es {
			if e.Probe == i {
				writeBars(w, e)
			}
		}
	}
}

// writeBars draws one key's log2 histogram as bpftrace's hist() does.
func writeBars(w io.Writer, e *probe.HistEntry) {
	first, last := -1, -1
	var top uint64
	for b, n := range e.Buckets {
		if n > 0 {
			if first < 0 {
				first = b
			}
			last = b
			top = max(top, n)
		}
	}
	if first < 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", e.Key)
	for b := first; b <= last; b++ {
		lo, hi := bucketRange(b)
		span := fmt.Sprintf("[%s, %s)", human(lo), human(hi))
		if hi == 0 {
			span = fmt.Sprintf("[%s, ...)", human(lo))
		}
		bar := strings.Repeat("@", int(52*e.Buckets[b]/top))
		fmt.Fprintf(w, "%-20s %8d |%-52s|\n", span, e.Buckets[b], bar)
	}
}

// human spells a power of two as bpftrace does: 1K, 4M.
func human(v uint64) string {
	if v == 0 {
		return "0"
	}
	shift := bits.TrailingZeros64(v)
	switch {
	case v == 1<<shift && shift >= 30:
		return fmt.Sprintf("%dG", v>>30)
	case v == 1<<shift && shift >= 20:
		return fmt.Sprintf("%dM", v>>20)
	case v == 1<<shift && shift >= 10:
		return fmt.Sprintf("%dK", v>>10)
	}
	return fmt.Sprint(v)
}

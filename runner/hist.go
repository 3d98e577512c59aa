package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/internal/table"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/spec"
)

// HistOptions say what goprobe hist aggregates and prints.
type HistOptions struct {
	Options
	// Key is the expression each hit is counted under; Value, when not
	// "", an expression summed and put in a log2 histogram per key. Both
	// are read at the hit, as arguments of every definition.
	Key, Value string
	// Interval, when > 0, prints the table at that interval too.
	Interval time.Duration
	// JSON prints one JSON object.
	JSON bool
	// Metrics serves the aggregates while the run lasts (hist --listen).
	Metrics *MetricOptions
}

// Hist aggregates in the kernel, as ftrace's hist triggers do: each hit
// of a probe adds one to the count of its key and the value to the key's
// sum and histogram; the table is printed at exit (and every Interval).
// It returns the command's exit status. Errors: a usage error without a
// key or definitions, or for a definition with arguments; a value that is
// text; the resolver's and the kernel's.
func Hist(o *HistOptions) (int, error) {
	if o.Key == "" {
		return 0, usage.Errorf("--key is required")
	}
	if len(o.Defs) == 0 {
		return 0, usage.Errorf("no probe definitions")
	}
	if err := o.Metrics.check(len(o.Defs)); err != nil {
		return 0, err
	}
	parts, spec, err := o.histSpec()
	if err != nil {
		return 0, err
	}
	target := parts[0].target
	only := onlyCommand(o.Run)
	kernelOnly := len(o.Run) > 0 && hasTracepoints(spec)
	ps, err := attachParts(parts, func(_ int, pt part) (Probes, error) {
		return o.kernel().AttachHist(pt.spec, pt.target, &attach.Options{PID: o.PID, Descendants: only, KernelDescendants: kernelOnly && hasTracepoints(pt.spec)})
	})
	if err != nil {
		return 0, err
	}
	sess := Probes(joined(ps))
	if len(ps) == 1 {
		sess = ps[0]
	}
	defer sess.Close()
	for _, pt := range parts {
		o.note("%d probes attached in %s", len(pt.spec.Probes), pt.target)
	}
	stopMetrics := func() {}
	if o.Metrics.serving() {
		if stopMetrics, err = o.Metrics.serveHist(sess, spec, target, o.Key, o.Value, o.Stderr); err != nil {
			return 0, err
		}
	}
	o.Stdout = locked(o.Stdout) // the command writes there too
	out := bufio.NewWriter(o.Stdout)
	print := func() {
		es, err := sess.Hist()
		if err != nil {
			o.note("%v", err)
			return
		}
		writeHist(out, spec, es, o.Value != "", o.JSON)
		out.Flush()
	}
	st := newStopper(o.Stop)
	defer st.end()
	st.watch(func() uint64 { h, _, _ := sess.Counts(); return sum(h) })
	var once sync.Once
	finish := func() {
		once.Do(func() {
			stopMetrics()
			sess.Detach()
			print()
			sess.Close()
			if st.why != "" {
				o.note("%s", st.why)
			}
		})
	}
	ro := runOptions{every: o.Interval, tick: func() bool { print(); return true }, stop: st.done(), stopped: finish}
	if only || kernelOnly {
		ro.gate = &attach.GateHooks{Exec: func(pid int) { sess.SetRoot(pid) }}
	}
	status, err := o.runOrWait(ro)
	if err != nil {
		return 0, err
	}
	finish()
	return status, nil
}

// histSpec resolves the definitions with the key and the value as their
// arguments, in each file of the run (see targetParts), and refuses a
// value that is text.
func (o *HistOptions) histSpec() ([]part, *spec.Spec, error) {
	var full []string
	for _, d := range o.Defs {
		if pd, err := probe.Parse(d); err == nil && len(pd.Args) > 0 {
			return nil, nil, usage.Errorf("%q: hist takes --key and --value, not arguments", d)
		}
		x := d + " key=" + o.Key
		if o.Value != "" {
			x += " value=" + o.Value
		}
		full = append(full, x)
	}
	ro := o.Options
	ro.Defs = full
	parts, spec, err := ro.targetParts()
	if err != nil {
		return nil, nil, err
	}
	reportUnavailable(o.Stderr, spec)
	for _, p := range spec.Probes {
		for _, s := range p.Sites {
			for _, a := range s.Args {
				if a.Name == "value" && a.Unavailable == "" && (a.Type == "string" || a.Type == "cstring" || a.Type == "chars" || a.Type == "bytes" || a.Type == "iface") {
					return nil, nil, fmt.Errorf("--value %s is text: it must be a number", o.Value)
				}
			}
		}
	}
	return parts, spec, nil
}

// bucketRange is the values log2 bucket b counts: [lo, hi).
func bucketRange(b int) (lo, hi uint64) {
	if b == 0 {
		return 0, 1
	}
	if b >= spec.HistBuckets-1 {
		return 1 << (b - 1), 0 // and above
	}
	return 1 << (b - 1), 1 << b
}

func writeHist(w io.Writer, spec *spec.Spec, es []*spec.HistEntry, value, asJSON bool) {
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
			Key   any    `json:"key"`
			Count uint64 `json:"count"`
			// Sum is a number, signed as the value's type is.
			Sum      json.RawMessage `json:"sum,omitempty"`
			Negative uint64          `json:"negative,omitempty"` // values below zero
			Buckets  []bucket        `json:"buckets,omitempty"`
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
					k.Sum, k.Negative = json.RawMessage(e.SumString()), e.Negative
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
		cols := []table.Column{table.Left("KEY"), table.Right("COUNT")}
		if value {
			cols = append(cols, table.Right("SUM"), table.Right("AVG"))
		}
		t := table.New(w, cols...)
		for _, e := range es {
			if e.Probe != i {
				continue
			}
			avg := e.SumFloat() / float64(max(e.Count, 1))
			t.Row(e.Key.String(), fmt.Sprint(e.Count), e.SumString(), fmt.Sprintf("%.1f", avg))
		}
		t.Flush()
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

// writeBars draws one key's log2 histogram as bpftrace's hist() does,
// the values below zero in a first bucket "(..., 0)".
func writeBars(w io.Writer, e *spec.HistEntry) {
	first, last := -1, -1
	top := e.Negative
	for b, n := range e.Buckets {
		if n > 0 {
			if first < 0 {
				first = b
			}
			last = b
			top = max(top, n)
		}
	}
	if first < 0 && e.Negative == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", e.Key)
	if e.Negative > 0 {
		fmt.Fprintf(w, "%-20s %8d |%-52s|\n", "(..., 0)", e.Negative, strings.Repeat("@", int(52*e.Negative/top)))
	}
	for b := first; b <= last && first >= 0; b++ {
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

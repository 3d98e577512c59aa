package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/metric"
	"github.com/binscope/binscope/spec"
)

// MetricOptions expose a stat or hist run's counts as Prometheus metrics
// (--listen and its companions).
type MetricOptions struct {
	Listen       string   // serve at http://ADDR/metrics; PORT or :PORT listen on 127.0.0.1 only
	Names        []string // the metrics' names, one per probe in order
	Helps        []string // their help texts
	Label        string   // hist: the key's label name
	MaxLabelSets int      // at most this many keys per probe; the rest count as dropped
}

func (m *MetricOptions) serving() bool { return m != nil && m.Listen != "" }

// check refuses metric options without Listen, and more names than probes.
func (m *MetricOptions) check(probes int) error {
	if m == nil {
		return nil
	}
	if m.Listen == "" {
		if len(m.Names) > 0 || len(m.Helps) > 0 || m.Label != "" {
			return usage.Errorf("--metric, --metric-help and --label name what --listen serves: add --listen ADDR")
		}
		return nil
	}
	if len(m.Names) > probes || len(m.Helps) > probes {
		return usage.Errorf("%d --metric and %d --metric-help for %d probes: give at most one each per probe, in order", len(m.Names), len(m.Helps), probes)
	}
	return nil
}

// families are the spec's probes as metric families: a counter each, or
// with a key a counter (no value) or histogram (value) per key.
func (m *MetricOptions) families(spec *spec.Spec, target, key, value string) ([]metric.Family, error) {
	if abs, err := filepath.Abs(target); err == nil {
		target = abs
	}
	var fs []metric.Family
	named := map[int]bool{}
	for i, p := range spec.Probes {
		def := strings.TrimSpace(p.Def)
		if key != "" {
			def = strings.TrimSpace(strings.SplitN(def, " key=", 2)[0])
		}
		f := metric.Family{Kind: metric.Counter, Probe: def, Binary: target}
		sites := len(p.Sites)
		switch {
		case key != "" && value != "":
			f.Kind = metric.Histogram
			f.Help = fmt.Sprintf("Log2 histogram of %s at %s per %s, aggregated in the kernel by goprobe (%d sites).", value, def, key, sites)
		case key != "":
			f.Help = fmt.Sprintf("Hits of %s per %s, counted in the kernel by goprobe at every call, inlined or not (%d sites).", def, key, sites)
		default:
			f.Help = fmt.Sprintf("Hits of %s, counted in the kernel by goprobe at every call, inlined or not (%d sites).", def, sites)
		}
		if key != "" {
			f.Label = m.Label
			if f.Label == "" {
				f.Label = metric.LabelName(key)
			}
		}
		f.Name = metric.DefaultName(def, f.Kind, value)
		if i < len(m.Names) {
			f.Name, named[i] = m.Names[i], true
		}
		if i < len(m.Helps) {
			f.Help = m.Helps[i]
		}
		fs = append(fs, f)
	}
	// Default names only are made distinct; a name given twice is an error.
	var defaults []metric.Family
	var idx []int
	for i := range fs {
		if !named[i] {
			defaults, idx = append(defaults, fs[i]), append(idx, i)
		}
	}
	metric.Unique(defaults)
	for k, i := range idx {
		fs[i].Name = defaults[k].Name
	}
	for i := range fs {
		err := fs[i].Check()
		if err != nil && !named[i] {
			// A function or value named with a unit's word (millis):
			// a plain name, until --metric gives a better one.
			fs[i].Name = fmt.Sprintf("goprobe_probe%d_calls_total", i+1)
			if fs[i].Kind == metric.Histogram {
				fs[i].Name = fmt.Sprintf("goprobe_probe%d_value", i+1)
			}
			err = fs[i].Check()
		}
		if err != nil {
			return nil, usage.Errorf("--metric for %s: %v", fs[i].Probe, err)
		}
	}
	return fs, nil
}

// listenAddr puts a bare PORT or :PORT on the loopback address: exposing
// a host's probes to the network is a choice the address must spell out.
func listenAddr(a string) string {
	if !strings.Contains(a, ":") {
		return "127.0.0.1:" + a
	}
	if strings.HasPrefix(a, ":") {
		return "127.0.0.1" + a
	}
	return a
}

// serveMetrics serves exp at http://ADDR/metrics until stop is called.
func serveMetrics(addr string, exp *metric.Exporter, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", listenAddr(addr))
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metric.Handler(metric.Registry(exp)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "goprobe: metrics at /metrics")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stderr, "goprobe: metrics at http://%s/metrics\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// labelValue is a key as a label's value: text as it is, numbers in
// decimal (or hex for x types), "?" when the key could not be read.
func labelValue(v spec.Value) string {
	if v.OK && (v.Type == "string" || v.Type == "cstring" || v.Type == "chars") {
		if v.Truncated {
			return v.Text + "..."
		}
		return v.Text
	}
	return v.String()
}

// statReading reads the counts of a stat run's sessions.
func statReading(ss *sessions, spec *spec.Spec) func() (*metric.Reading, error) {
	n := len(spec.Probes)
	return func() (*metric.Reading, error) {
		hits, dropped := ss.counts(n)
		r := &metric.Reading{Missed: ss.misses(n), Dropped: dropped}
		for i, p := range spec.Probes {
			r.Series = append(r.Series, metric.Series{Family: i, Count: hits[i]})
			r.Sites = append(r.Sites, len(p.Sites))
		}
		return r, nil
	}
}

// histReading reads a hist session's aggregates.
func histReading(sess Probes, spec *spec.Spec) func() (*metric.Reading, error) {
	n := len(spec.Probes)
	return func() (*metric.Reading, error) {
		// The hits first: a hit between the two reads then counts under
		// its key, never as unaggregated.
		hits, dropped, err := sess.Counts()
		if err != nil {
			return nil, err
		}
		es, err := sess.Hist()
		if err != nil {
			return nil, err
		}
		r := &metric.Reading{Missed: sess.Misses(), Dropped: dropped, Unaggregated: make([]uint64, n)}
		kept := make([]uint64, n)
		for _, e := range es {
			r.Series = append(r.Series, metric.Series{Family: e.Probe, Key: labelValue(e.Key), Count: e.Count, Sum: e.Sum, Buckets: e.Buckets[:], Negative: e.Negative, Signed: e.Signed})
			kept[e.Probe] += e.Count
		}
		for i, p := range spec.Probes {
			r.Sites = append(r.Sites, len(p.Sites))
			if i < len(hits) && hits[i] > kept[i] {
				r.Unaggregated[i] = hits[i] - kept[i]
			}
		}
		return r, nil
	}
}

// serveStat serves a stat run's counts.
func (m *MetricOptions) serveStat(ss *sessions, spec *spec.Spec, target string, stderr io.Writer) (func(), error) {
	fams, err := m.families(spec, target, "", "")
	if err != nil {
		return nil, err
	}
	return m.serve(fams, statReading(ss, spec), stderr)
}

// serveHist serves a hist run's aggregates.
func (m *MetricOptions) serveHist(sess Probes, spec *spec.Spec, target, key, value string, stderr io.Writer) (func(), error) {
	fams, err := m.families(spec, target, key, value)
	if err != nil {
		return nil, err
	}
	return m.serve(fams, histReading(sess, spec), stderr)
}

func (m *MetricOptions) serve(fams []metric.Family, read func() (*metric.Reading, error), stderr io.Writer) (func(), error) {
	exp, err := metric.NewExporter(fams, read, &metric.Options{MaxLabelSets: m.MaxLabelSets, Warn: func(msg string) {
		fmt.Fprintf(stderr, "goprobe: %s\n", msg)
	}})
	if err != nil {
		return nil, err
	}
	return serveMetrics(m.Listen, exp, stderr)
}

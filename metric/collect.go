package metric

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Buckets is the number of log2 buckets of a Series: bucket 0 counts
// zeros, bucket b in 1..Buckets-2 the values in [2^(b-1), 2^b), the last
// one everything above (spec.HistBuckets).
const Buckets = 64

// Series is one key's aggregate, or a probe's hits.
type Series struct {
	Family int
	// Key is the label's value; unused when the family has no Label.
	Key string
	// Count is the hits; for a Histogram, Sum is the sum of the values
	// read (an int64 in two's complement when Signed), Buckets their log2
	// buckets and Negative the values below zero, which no bucket holds.
	Count, Sum uint64
	Buckets    []uint64
	Negative   uint64
	Signed     bool
}

// SumFloat is the series' sum as a float64, signed or not.
func (s *Series) SumFloat() float64 {
	if s.Signed {
		return float64(int64(s.Sum))
	}
	return float64(s.Sum)
}

// Reading is what the caller's sessions hold at a scrape.
type Reading struct {
	Series []Series
	// Per family: the sites attached (0: not attached now), the hits the
	// kernel missed (recursion misses), the hits no key could be made for
	// (the kernel's map was full).
	Sites        []int
	Missed       []uint64
	Unaggregated []uint64
	// Dropped counts the records the ring buffer had no room for.
	Dropped uint64
}

// Options tune an Exporter. A nil *Options means the defaults.
type Options struct {
	// MaxLabelSets caps the label sets (keys) one family exposes;
	// 0 means DefaultMaxLabelSets. The first keys seen stay; keys past the
	// cap are counted in goprobe_label_sets_dropped_total, and Warn is
	// called once per family when the cap is first met.
	MaxLabelSets int
	Warn         func(msg string)
}

// DefaultMaxLabelSets is the cap on label sets per family.
const DefaultMaxLabelSets = 500

// Exporter is a prometheus.Collector that reads its families' series at
// each scrape. It is unchecked (Describe sends nothing): its families may
// change (Set), as a probes file's do on reload.
type Exporter struct {
	mu    sync.Mutex
	fams  []Family
	read  func() (*Reading, error)
	max   int
	warn  func(string)
	state []*famState
}

// famState is what an Exporter keeps per family across scrapes: the keys
// admitted under the cap (sticky, so series do not flap), the keys
// dropped, the highest bucket seen (histogram series share one bucket
// layout, up to it).
type famState struct {
	admitted map[string]bool
	dropped  map[string]uint64 // key -> hits when last read
	warned   bool
	top      int
}

// NewExporter returns an exporter of fams, read with read at each scrape.
func NewExporter(fams []Family, read func() (*Reading, error), o *Options) (*Exporter, error) {
	e := &Exporter{max: DefaultMaxLabelSets, warn: func(string) {}}
	if o != nil {
		if o.MaxLabelSets > 0 {
			e.max = o.MaxLabelSets
		}
		if o.Warn != nil {
			e.warn = o.Warn
		}
	}
	if err := e.Set(fams, read); err != nil {
		return nil, err
	}
	return e, nil
}

// Set replaces the families and the reader. A family whose name, kind and
// label are unchanged keeps its admitted keys.
func (e *Exporter) Set(fams []Family, read func() (*Reading, error)) error {
	seen := map[string]bool{}
	for i := range fams {
		if err := fams[i].Check(); err != nil {
			return fmt.Errorf("%s: %w", fams[i].Probe, err)
		}
		for _, n := range seriesNames(&fams[i]) {
			if seen[n] {
				return fmt.Errorf("%s: %w: %q is already another probe's series", fams[i].Probe, ErrName, n)
			}
			seen[n] = true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := map[string]*famState{}
	for i, f := range e.fams {
		old[identity(&f)] = e.state[i]
	}
	e.state = make([]*famState, len(fams))
	for i := range fams {
		if st := old[identity(&fams[i])]; st != nil {
			e.state[i] = st
		} else {
			e.state[i] = &famState{admitted: map[string]bool{}, dropped: map[string]uint64{}}
		}
	}
	e.fams, e.read = append([]Family(nil), fams...), read
	return nil
}

func identity(f *Family) string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%s", f.Name, f.Kind, f.Label, f.Probe, f.Binary)
}

// seriesNames are the names a family's samples carry.
func seriesNames(f *Family) []string {
	if f.Kind == Histogram {
		return []string{f.Name + "_bucket", f.Name + "_sum", f.Name + "_count"}
	}
	return []string{f.Name}
}

// Describe sends nothing: the exporter is unchecked.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

var ownLabels = []string{"metric", "probe", "binary"}

var (
	descSites = prometheus.NewDesc("goprobe_probe_sites",
		"Uprobe sites attached for the probe (0: not attached now, as while its binary is missing).", ownLabels, nil)
	descMissed = prometheus.NewDesc("goprobe_probe_missed_total",
		"Hits the kernel did not run the probe's program for: another BPF program was running on the CPU (recursion misses).", ownLabels, nil)
	descUnagg = prometheus.NewDesc("goprobe_probe_unaggregated_total",
		"Hits counted but kept under no key: the kernel's aggregation map was full.", ownLabels, nil)
	descDroppedSets = prometheus.NewDesc("goprobe_label_sets_dropped_total",
		"Label sets (keys) not exposed because the probe's metric met the cap on label sets (--max-label-sets).", ownLabels, nil)
	descDroppedHits = prometheus.NewDesc("goprobe_label_sets_dropped_hits_total",
		"Hits of the label sets not exposed because of the cap on label sets.", ownLabels, nil)
	descRingDropped = prometheus.NewDesc("goprobe_ringbuf_dropped_total",
		"Event records the ring buffer had no room for.", nil, nil)
	descScrapeErrors = prometheus.NewDesc("goprobe_read_errors_total",
		"Scrapes at which reading the kernel's maps failed.", nil, nil)
)

// Collect reads the sessions and sends every family's series and
// goprobe's own metrics.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.read()
	if err != nil || r == nil {
		ch <- prometheus.NewInvalidMetric(descScrapeErrors, fmt.Errorf("reading the probes' maps: %v", err))
		return
	}
	descs := make([]*prometheus.Desc, len(e.fams))
	for i := range e.fams {
		f := &e.fams[i]
		var labels []string
		if f.Label != "" {
			labels = []string{f.Label}
		}
		descs[i] = prometheus.NewDesc(f.Name, f.Help, labels, nil)
	}
	for _, i := range busiestFirst(r.Series) {
		s := &r.Series[i]
		if s.Family < 0 || s.Family >= len(e.fams) {
			continue
		}
		f, st := &e.fams[s.Family], e.state[s.Family]
		lv, ok := e.admit(f, st, s)
		if !ok {
			continue
		}
		if f.Kind == Counter {
			ch <- prometheus.MustNewConstMetric(descs[s.Family], prometheus.CounterValue, float64(s.Count), lv...)
			continue
		}
		cum, total := st.histogram(s)
		ch <- prometheus.MustNewConstHistogram(descs[s.Family], total, s.SumFloat(), cum, lv...)
	}
	e.collectFamilies(ch, r)
	ch <- prometheus.MustNewConstMetric(descRingDropped, prometheus.CounterValue, float64(r.Dropped))
}

// busiestFirst is the order keys are admitted in, stable: by family, the
// busiest first, then by name, so the cap keeps the keys that matter when
// many arrive at once.
func busiestFirst(series []Series) []int {
	order := make([]int, len(series))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &series[order[a]], &series[order[b]]
		if x.Family != y.Family {
			return x.Family < y.Family
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.Key < y.Key
	})
	return order
}

// admit returns the label values of s in family f, and false when its key
// is one more than --max-label-sets admits: the key is then counted as
// dropped, and the first such key of the family is reported once.
func (e *Exporter) admit(f *Family, st *famState, s *Series) ([]string, bool) {
	if f.Label == "" {
		return nil, true
	}
	key := strings.ToValidUTF8(s.Key, "\uFFFD")
	if !st.admitted[key] {
		if len(st.admitted) >= e.max {
			st.dropped[key] = s.Count
			if !st.warned {
				st.warned = true
				e.warn(fmt.Sprintf("%s: more than %d label sets of %s: the rest are dropped from /metrics and counted in goprobe_label_sets_dropped_total (raise --max-label-sets)", f.Name, e.max, f.Label))
			}
			return nil, false
		}
		st.admitted[key] = true
	}
	return []string{key}, true
}

// histogram returns the cumulative buckets of s up to the highest bucket
// the family has used (which only grows, so a bucket never disappears
// from /metrics), and the count of all its values.
func (st *famState) histogram(s *Series) (cum map[float64]uint64, total uint64) {
	for b := len(s.Buckets) - 1; b > st.top; b-- {
		if s.Buckets[b] > 0 {
			st.top = min(b, Buckets-2)
			break
		}
	}
	cum = map[float64]uint64{}
	n := s.Negative // the integers below zero are all <= -1
	if n > 0 {
		cum[-1] = n
	}
	for b := 0; b <= st.top; b++ {
		if b < len(s.Buckets) {
			n += s.Buckets[b]
		}
		cum[UpperBound(b)] = n
	}
	total = s.Negative
	for _, c := range s.Buckets {
		total += c
	}
	return cum, total
}

// collectFamilies sends each family's own series: its sites, the events
// its probes missed, and for a labelled family the events not aggregated
// and the label sets dropped with their hits.
func (e *Exporter) collectFamilies(ch chan<- prometheus.Metric, r *Reading) {
	for i := range e.fams {
		f, st := &e.fams[i], e.state[i]
		lv := []string{f.Name, f.Probe, f.Binary}
		sites := 0
		if i < len(r.Sites) {
			sites = r.Sites[i]
		}
		ch <- prometheus.MustNewConstMetric(descSites, prometheus.GaugeValue, float64(sites), lv...)
		ch <- prometheus.MustNewConstMetric(descMissed, prometheus.CounterValue, float64(at(r.Missed, i)), lv...)
		if f.Label != "" {
			ch <- prometheus.MustNewConstMetric(descUnagg, prometheus.CounterValue, float64(at(r.Unaggregated, i)), lv...)
			var hits uint64
			for _, h := range st.dropped {
				hits += h
			}
			ch <- prometheus.MustNewConstMetric(descDroppedSets, prometheus.CounterValue, float64(len(st.dropped)), lv...)
			ch <- prometheus.MustNewConstMetric(descDroppedHits, prometheus.CounterValue, float64(hits), lv...)
		}
	}
}

func at(v []uint64, i int) uint64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// UpperBound is log2 bucket b's inclusive upper bound, its le: the
// integers in [2^(b-1), 2^b) are those <= 2^b-1, so a bucket's le is
// exact for integer values (0, 1, 3, 7, 15...).
func UpperBound(b int) float64 {
	if b == 0 {
		return 0
	}
	return math.Exp2(float64(b)) - 1
}

// Handler serves the registry's metrics at /metrics in the Prometheus
// text format, or OpenMetrics when the scraper asks for it.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
}

// Registry is a registry with e and goprobe's own process and Go runtime
// metrics (process_resident_memory_bytes: the agent's memory over time).
func Registry(e *Exporter) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return reg
}

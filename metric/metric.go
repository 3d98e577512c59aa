// Package metric exposes probe counts and in-kernel aggregates as
// Prometheus metrics: a counter per probe (hits), a counter per key for a
// keyed count, a histogram per key whose buckets are the kernel's log2
// buckets, and goprobe's own state (sites attached, recursion misses, ring
// buffer drops, label sets dropped by the cardinality cap).
//
// Names follow Prometheus's conventions: snake_case, counters end in
// _total; a name that breaks them is an error at start, not a surprise in
// the scrape. The package knows nothing of BPF: a Reading is what the
// caller read from its sessions at scrape time.
package metric

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Kind is what a family exposes per series.
type Kind int

const (
	// Counter: one counter per key (or one for the probe), the hits.
	Counter Kind = iota
	// Histogram: per key, the value's log2 buckets, sum and count.
	Histogram
)

// Family is one probe's metric.
type Family struct {
	// Name is the metric's name: a Counter's ends in _total; a
	// Histogram's is the base of NAME_bucket, NAME_sum and NAME_count.
	Name string
	Help string
	Kind Kind
	// Label names the key's label ("" for a probe without a key).
	Label string
	// Probe is the definition, and Binary the file probed: the labels of
	// goprobe's own metrics about this probe.
	Probe, Binary string
}

// ErrName is returned for a metric or label name that Prometheus would
// refuse or that breaks its conventions.
var ErrName = errors.New("bad metric name")

var (
	nameRE  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// reserved are the suffixes of a histogram's series and of goprobe's own
// metrics' prefix, which a family's name may not take.
var histSuffixes = []string{"_bucket", "_sum", "_count", "_total", "_created"}

// Check reports whether f's name and label follow the conventions: a
// valid name, snake_case (no capitals), a Counter ending in _total, a
// Histogram not ending in a suffix its series add, a valid label name
// that Prometheus does not reserve (__x, le).
func (f *Family) Check() error {
	if !nameRE.MatchString(f.Name) || strings.Contains(f.Name, ":") {
		return fmt.Errorf("%w %q: use letters, digits and _ (snake_case), not starting with a digit", ErrName, f.Name)
	}
	if strings.ToLower(f.Name) != f.Name {
		return fmt.Errorf("%w %q: Prometheus names are snake_case: %q", ErrName, f.Name, Snake(f.Name))
	}
	if strings.HasPrefix(f.Name, "goprobe_probe_") || strings.HasPrefix(f.Name, "goprobe_label_sets_") {
		return fmt.Errorf("%w %q: goprobe's own metrics use that prefix", ErrName, f.Name)
	}
	switch f.Kind {
	case Counter:
		if !strings.HasSuffix(f.Name, "_total") {
			return fmt.Errorf("%w %q: a counter's name ends in _total (%s_total)", ErrName, f.Name, f.Name)
		}
	case Histogram:
		for _, s := range histSuffixes {
			if strings.HasSuffix(f.Name, s) {
				return fmt.Errorf("%w %q: a histogram's series add %s: name it by what it measures, with its unit (request_bytes)", ErrName, f.Name, s)
			}
		}
	}
	if f.Label != "" {
		if !labelRE.MatchString(f.Label) || strings.HasPrefix(f.Label, "__") || f.Label == "le" || f.Label == "quantile" {
			return fmt.Errorf("%w: label %q: use letters, digits and _, not le, quantile or a leading __", ErrName, f.Label)
		}
	}
	return lint(f)
}

// lint runs promtool's checks (promlint: base units, no abbreviated
// units, no type in the name, help text) on f.
func lint(f *Family) error {
	typ := dto.MetricType_COUNTER
	m := &dto.Metric{Counter: &dto.Counter{Value: proto.Float64(0)}}
	if f.Kind == Histogram {
		typ = dto.MetricType_HISTOGRAM
		m = &dto.Metric{Histogram: &dto.Histogram{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)}}
	}
	if f.Label != "" {
		m.Label = []*dto.LabelPair{{Name: proto.String(f.Label), Value: proto.String("x")}}
	}
	mf := &dto.MetricFamily{Name: proto.String(f.Name), Type: &typ, Metric: []*dto.Metric{m}}
	if f.Help != "" {
		mf.Help = proto.String(f.Help)
	}
	ps, err := promlint.NewWithMetricFamilies([]*dto.MetricFamily{mf}).Lint()
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		var texts []string
		for _, p := range ps {
			texts = append(texts, p.Text)
		}
		return fmt.Errorf("%w %q: %s", ErrName, f.Name, strings.Join(texts, "; "))
	}
	return nil
}

// dropWords are the name tokens promtool refuses in a default name: type
// names and abbreviated units.
var dropWords = map[string]bool{"counter": true, "gauge": true, "histogram": true, "summary": true,
	"s": true, "ms": true, "us": true, "ns": true, "sec": true, "b": true, "kb": true, "mb": true,
	"gb": true, "tb": true, "pb": true, "m": true, "h": true, "d": true}

// tokens is s in snake_case without dropWords.
func tokens(s string) string {
	var keep []string
	for _, t := range strings.Split(Snake(s), "_") {
		if t != "" && !dropWords[t] {
			keep = append(keep, t)
		}
	}
	return strings.Join(keep, "_")
}

// Snake spells s in snake_case with only [a-z0-9_]: fqName -> fq_name,
// (*counter).Inc -> counter_inc; runs of other bytes become one _.
func Snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	under := true // the last byte written is _ (or nothing is)
	for i, r := range rs {
		var prev rune
		if i > 0 {
			prev = rs[i-1]
		}
		switch {
		case unicode.IsUpper(r):
			// A word starts at an upper-case letter after a lower-case one
			// or a digit, or before a lower-case one in a run (HTTPServer).
			if !under && (unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			under = false
		case r < 0x80 && (unicode.IsLower(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			under = false
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	return strings.Trim(b.String(), "_")
}

// DefaultName is the name a probe's metric gets when none is given:
// goprobe_, the function's last path element in snake_case (without the
// words promtool refuses: type names, abbreviated units), then what is
// counted: calls_total (or returns_total for FUNC%return, hits_total for
// a line or offset) for a Counter, the value expression's last field for a
// Histogram.
//
//	github.com/prometheus/client_golang/prometheus.(*counter).Inc
//	  -> goprobe_prometheus_inc_calls_total
//	maybe_alloc with --value i -> goprobe_maybe_alloc_i
func DefaultName(def string, kind Kind, value string) string {
	fn := def
	if i := strings.IndexAny(fn, " \t"); i >= 0 {
		fn = fn[:i]
	}
	what := "calls"
	if f, ok := strings.CutSuffix(fn, "%return"); ok {
		fn, what = f, "returns"
	} else if strings.ContainsAny(fn, ":+") {
		what = "hits"
	}
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		fn = fn[i+1:]
	}
	base := "goprobe"
	if t := tokens(fn); t != "" {
		base += "_" + t
	}
	if kind == Histogram {
		v := tokens(LabelName(value))
		if v == "" || v == "key" {
			v = "value"
		}
		return base + "_" + v
	}
	return base + "_" + what + "_total"
}

// LabelName is the label a key expression gets by default: its last field
// in snake_case (c->desc->fqName -> fq_name, $retval -> retval); "key"
// when nothing is left or the result is reserved.
func LabelName(expr string) string {
	if i := strings.LastIndexAny(expr, ">.]"); i >= 0 && i+1 < len(expr) {
		expr = expr[i+1:]
	}
	if i := strings.IndexByte(expr, ':'); i > 0 { // EXPR:TYPE
		expr = expr[:i]
	}
	l := Snake(expr)
	if l == "" || l == "le" || l == "quantile" || l[0] >= '0' && l[0] <= '9' {
		return "key"
	}
	return l
}

// Unique makes the families' names distinct, appending _2, _3... before a
// counter's _total, in order.
func Unique(fs []Family) {
	seen := map[string]int{}
	for i := range fs {
		n := fs[i].Name
		seen[n]++
		if c := seen[n]; c > 1 {
			if b, ok := strings.CutSuffix(n, "_total"); ok {
				fs[i].Name = b + "_" + strconv.Itoa(c) + "_total"
			} else {
				fs[i].Name = n + "_" + strconv.Itoa(c)
			}
		}
	}
}

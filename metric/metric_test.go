package metric

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		def   string
		kind  Kind
		value string
		want  string
	}{
		{"github.com/prometheus/client_golang/prometheus.(*counter).Inc", Counter, "", "goprobe_prometheus_inc_calls_total"},
		{"main.(*acc).add v a->n", Counter, "", "goprobe_main_acc_add_calls_total"},
		{"first%return $retval", Counter, "", "goprobe_first_returns_total"},
		{"part.c:14", Counter, "", "goprobe_part_c_14_hits_total"},
		{"maybe_alloc", Histogram, "i", "goprobe_maybe_alloc_i"},
		{"net/http.(*conn).serve", Histogram, "c->r->remain", "goprobe_http_conn_serve_remain"},
		{"HTTPServer.ServeHTTP", Counter, "", "goprobe_http_server_serve_http_calls_total"},
	} {
		got := DefaultName(tc.def, tc.kind, tc.value)
		if got != tc.want {
			t.Errorf("DefaultName(%q) = %q, want %q", tc.def, got, tc.want)
		}
		f := Family{Name: got, Help: "h", Kind: tc.kind}
		if err := f.Check(); err != nil {
			t.Errorf("%s: %v", got, err)
		}
	}
	if got := LabelName("c->desc->fqName"); got != "fq_name" {
		t.Errorf("LabelName = %q", got)
	}
	for _, f := range []Family{
		{Name: "requests", Kind: Counter},
		{Name: "requestsTotal_total", Kind: Counter},
		{Name: "latency_milliseconds", Kind: Histogram},
		{Name: "size_bytes_count", Kind: Histogram},
		{Name: "x_total", Kind: Counter, Label: "le"},
	} {
		if err := f.Check(); !errors.Is(err, ErrName) {
			t.Errorf("%+v: got %v, want ErrName", f, err)
		}
	}
}

// TestExporter: counters, histograms with le at each log2 bucket's
// inclusive bound, and the cap on label sets reported as a metric and
// once through Warn.
func TestExporter(t *testing.T) {
	fams := []Family{
		{Name: "app_calls_total", Help: "Calls.", Kind: Counter, Probe: "main.f", Binary: "/app"},
		{Name: "app_work_bytes", Help: "Work.", Kind: Histogram, Label: "name", Probe: "main.g", Binary: "/app"},
	}
	var b [Buckets]uint64
	b[0], b[1], b[3] = 1, 2, 1 // 0; 1, 1; 5
	r := &Reading{Series: []Series{
		{Family: 0, Count: 7},
		{Family: 1, Key: "a", Count: 4, Sum: 7, Buckets: b[:]},
		{Family: 1, Key: "b", Count: 1, Sum: 1, Buckets: []uint64{0, 1}},
		{Family: 1, Key: "c", Count: 1, Sum: 1, Buckets: []uint64{0, 1}},
	}, Sites: []int{1, 2}}
	var warned []string
	e, err := NewExporter(fams, func() (*Reading, error) { return r, nil }, &Options{MaxLabelSets: 2, Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	want := `
# HELP app_calls_total Calls.
# TYPE app_calls_total counter
app_calls_total 7
# HELP app_work_bytes Work.
# TYPE app_work_bytes histogram
app_work_bytes_bucket{name="a",le="0"} 1
app_work_bytes_bucket{name="a",le="1"} 3
app_work_bytes_bucket{name="a",le="3"} 3
app_work_bytes_bucket{name="a",le="7"} 4
app_work_bytes_bucket{name="a",le="+Inf"} 4
app_work_bytes_sum{name="a"} 7
app_work_bytes_count{name="a"} 4
app_work_bytes_bucket{name="b",le="0"} 0
app_work_bytes_bucket{name="b",le="1"} 1
app_work_bytes_bucket{name="b",le="3"} 1
app_work_bytes_bucket{name="b",le="7"} 1
app_work_bytes_bucket{name="b",le="+Inf"} 1
app_work_bytes_sum{name="b"} 1
app_work_bytes_count{name="b"} 1
# HELP goprobe_label_sets_dropped_total Label sets (keys) not exposed because the probe's metric met the cap on label sets (--max-label-sets).
# TYPE goprobe_label_sets_dropped_total counter
goprobe_label_sets_dropped_total{binary="/app",metric="app_work_bytes",probe="main.g"} 1
`
	if err := testutil.CollectAndCompare(e, strings.NewReader(want), "app_calls_total", "app_work_bytes", "goprobe_label_sets_dropped_total"); err != nil {
		t.Error(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "more than 2 label sets") {
		t.Errorf("warnings %q", warned)
	}
	// Sticky: a busier new key does not push out an admitted one.
	r.Series = append(r.Series, Series{Family: 1, Key: "d", Count: 100, Buckets: []uint64{100}})
	if n := testutil.CollectAndCount(e, "app_work_bytes"); n != 2 {
		t.Errorf("%d histogram series, want 2", n)
	}
	if len(warned) != 1 {
		t.Errorf("warned again: %q", warned)
	}
}

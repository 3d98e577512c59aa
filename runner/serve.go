package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/binscope/binscope/metric"
	"github.com/binscope/binscope/spec"
)

// probesFile is goprobe serve's configuration: probes on binaries named by
// path, each with its metric.
type probesFile struct {
	Listen       string      `json:"listen"`
	MaxLabelSets int         `json:"max_label_sets"`
	Probes       []probeItem `json:"probes"`
}

// probeItem is one probe: a definition on a binary, with a key (and a
// value) for a keyed counter (or histogram), and its metric's name, help
// and label.
type probeItem struct {
	Binary string `json:"binary"`
	Probe  string `json:"probe"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value,omitempty"`
	Metric string `json:"metric,omitempty"`
	Help   string `json:"help,omitempty"`
	Label  string `json:"label,omitempty"`
}

func readProbesFile(path string) (*probesFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pf probesFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i, p := range pf.Probes {
		switch {
		case p.Binary == "" || !filepath.IsAbs(p.Binary):
			return nil, fmt.Errorf("%s: probe %d: binary must be an absolute path", path, i+1)
		case p.Probe == "" || len(strings.Fields(p.Probe)) != 1:
			return nil, fmt.Errorf("%s: probe %d: probe is one definition without arguments (FUNC, FUNC%%return, FILE:LINE); use key and value", path, i+1)
		case p.Value != "" && p.Key == "":
			return nil, fmt.Errorf("%s: probe %d: a value needs a key", path, i+1)
		}
	}
	return &pf, nil
}

// unit is one probe of the file at run time.
type unit struct {
	item probeItem
	fam  metric.Family

	cur  Probes
	spec *spec.Spec
	id   fileID
	old  []retired // sessions on replaced files, while processes run them
	// base holds the counts of closed sessions: counters never go back.
	baseHits uint64
	baseMiss uint64
	baseKeys map[string]*metric.Series
	lastErr  string
}

type retired struct {
	sess Probes
	id   fileID
}

// server is goprobe serve's state.
type server struct {
	mu     sync.Mutex
	units  []*unit
	stderr io.Writer
	kernel Kernel
}

// ServeOptions say what goprobe serve reads and where it serves.
type ServeOptions struct {
	// File is the probes file (see goprobe serve --help), read again on
	// SIGHUP.
	File string
	// Listen and MaxLabelSets override the file's; "" and 0 keep them
	// (127.0.0.1:9464 and 500 when the file says nothing).
	Listen       string
	MaxLabelSets int
	// Kernel attaches; nil means Host.
	Kernel Kernel
	// Stderr receives what the agent says.
	Stderr io.Writer
}

// Serve runs as an agent until SIGINT or SIGTERM: it attaches the probes
// the file names to every process running their binaries, now and later
// (a binary that appears, one replaced on disk, its counts carried over),
// and serves their counts, keyed counts and log2 histograms as
// Prometheus metrics. Errors: the file's (one line naming it and the
// entry), the listener's.
func Serve(o *ServeOptions) error {
	path, listen, maxSets, stderr := o.File, o.Listen, o.MaxLabelSets, locked(o.Stderr)
	pf, err := readProbesFile(path)
	if err != nil {
		return err
	}
	if listen == "" {
		listen = pf.Listen
	}
	if listen == "" {
		listen = "127.0.0.1:9464"
	}
	if maxSets == 0 {
		maxSets = pf.MaxLabelSets
	}
	s := &server{stderr: stderr, kernel: o.Kernel}
	if s.kernel == nil {
		s.kernel = Host
	}
	fams, err := s.load(pf)
	if err != nil {
		return err
	}
	defer s.closeAll()
	exp, err := metric.NewExporter(fams, s.reading, &metric.Options{MaxLabelSets: maxSets, Warn: func(msg string) {
		fmt.Fprintf(stderr, "goprobe: %s\n", msg)
	}})
	if err != nil {
		return err
	}
	stop, err := serveMetrics(listen, exp, stderr)
	if err != nil {
		return err
	}
	defer stop()
	s.tick()
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGHUP, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.tick()
		case g := <-sig:
			if g != syscall.SIGHUP {
				return nil
			}
			pf, err := readProbesFile(path)
			if err == nil {
				var fams []metric.Family
				if fams, err = s.load(pf); err == nil {
					err = exp.Set(fams, s.reading)
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "goprobe: SIGHUP: %v: keeping the probes as they were\n", err)
				continue
			}
			fmt.Fprintf(stderr, "goprobe: %s read again: %d probes\n", path, len(pf.Probes))
			s.tick()
		}
	}
}

// load makes the file's units, keeping those whose entry is unchanged,
// and returns their families; nothing changes on an error.
func (s *server) load(pf *probesFile) ([]metric.Family, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	have := map[probeItem]*unit{}
	for _, u := range s.units {
		have[u.item] = u
	}
	var units []*unit
	var fams []metric.Family
	for _, it := range pf.Probes {
		u := have[it]
		if u == nil {
			u = &unit{item: it, baseKeys: map[string]*metric.Series{}}
			u.fam = metric.Family{Name: it.Metric, Help: it.Help, Label: it.Label, Probe: it.Probe, Binary: it.Binary}
			if it.Value != "" {
				u.fam.Kind = metric.Histogram
			}
			if it.Key != "" && u.fam.Label == "" {
				u.fam.Label = metric.LabelName(it.Key)
			}
			if u.fam.Name == "" {
				u.fam.Name = metric.DefaultName(it.Probe, u.fam.Kind, it.Value)
			}
			if u.fam.Help == "" {
				u.fam.Help = fmt.Sprintf("Hits of %s in %s, counted in the kernel by goprobe.", it.Probe, it.Binary)
				if it.Value != "" {
					u.fam.Help = fmt.Sprintf("Log2 histogram of %s at %s in %s per %s, aggregated in the kernel by goprobe.", it.Value, it.Probe, it.Binary, it.Key)
				}
			}
		}
		if err := u.fam.Check(); err != nil {
			return nil, fmt.Errorf("%s in %s: %v", it.Probe, it.Binary, err)
		}
		units, fams = append(units, u), append(fams, u.fam)
	}
	keep := map[*unit]bool{}
	for _, u := range units {
		keep[u] = true
	}
	for _, u := range s.units {
		if !keep[u] {
			u.close()
		}
	}
	s.units = units
	return fams, nil
}

func (u *unit) defs() string {
	d := u.item.Probe
	if u.item.Key != "" {
		d += " key=" + u.item.Key
		if u.item.Value != "" {
			d += " value=" + u.item.Value
		}
	}
	return d
}

// tick attaches units whose binary appeared or was replaced, and retires
// sessions on replaced files no process runs any more.
func (s *server) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var running map[fileID]bool
	for _, u := range s.units {
		id, ok := statID(u.item.Binary)
		if ok && (u.cur == nil || id != u.id) {
			u.attach(id, s.kernel, s.stderr)
		}
		if len(u.old) > 0 {
			if running == nil {
				running = runningExes()
			}
			kept := u.old[:0]
			for _, r := range u.old {
				if running[r.id] {
					kept = append(kept, r)
				} else {
					u.retire(r.sess)
				}
			}
			u.old = kept
		}
	}
}

func (u *unit) attach(id fileID, k Kernel, stderr io.Writer) {
	spec, err := Resolve(u.item.Binary, []string{u.defs()}, stderr)
	var sess Probes
	if err == nil {
		if u.item.Key != "" {
			sess, err = k.AttachHist(spec, u.item.Binary, nil)
		} else {
			sess, err = k.Attach(spec, u.item.Binary, nil)
		}
	}
	if err != nil {
		if msg := err.Error(); msg != u.lastErr {
			u.lastErr = msg
			fmt.Fprintf(stderr, "goprobe: %s in %s: %v (trying again when the file changes)\n", u.item.Probe, u.item.Binary, err)
		}
		u.id = id // not again until the file changes
		return
	}
	u.lastErr = ""
	if u.cur != nil {
		u.old = append(u.old, retired{u.cur, u.id})
		fmt.Fprintf(stderr, "goprobe: %s was replaced on disk: %s attached to the new file\n", u.item.Binary, u.item.Probe)
	} else {
		fmt.Fprintf(stderr, "goprobe: %s attached at %d sites in %s\n", u.item.Probe, len(spec.Probes[0].Sites), u.item.Binary)
	}
	u.cur, u.spec, u.id = sess, spec, id
}

// retire closes a session, keeping its counts in the base.
func (u *unit) retire(sess Probes) {
	hits, _, _ := sess.Counts()
	if len(hits) > 0 && u.item.Key == "" {
		u.baseHits += hits[0]
	}
	for _, m := range sess.Misses() {
		u.baseMiss += m
	}
	if u.item.Key != "" {
		es, _ := sess.Hist()
		for _, e := range es {
			addEntry(u.baseKeys, e)
		}
	}
	sess.Close()
}

func addEntry(to map[string]*metric.Series, e *spec.HistEntry) {
	k := labelValue(e.Key)
	s := to[k]
	if s == nil {
		s = &metric.Series{Key: k, Buckets: make([]uint64, metric.Buckets)}
		to[k] = s
	}
	s.Count += e.Count
	s.Sum += e.Sum
	s.Negative += e.Negative
	s.Signed = e.Signed
	for b, n := range e.Buckets {
		s.Buckets[b] += n
	}
}

func (u *unit) close() {
	for _, r := range u.old {
		r.sess.Close()
	}
	u.old = nil
	if u.cur != nil {
		u.cur.Close()
		u.cur = nil
	}
}

func (s *server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.units {
		u.close()
	}
}

// reading sums each unit's sessions and base.
func (s *server) reading() (*metric.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &metric.Reading{}
	var errs []error
	for i, u := range s.units {
		sessions := []Probes{}
		for _, o := range u.old {
			sessions = append(sessions, o.sess)
		}
		if u.cur != nil {
			sessions = append(sessions, u.cur)
		}
		sites, missed, hits, dropped := 0, u.baseMiss, u.baseHits, uint64(0)
		if u.cur != nil {
			sites = len(u.spec.Probes[0].Sites)
		}
		keys := map[string]*metric.Series{}
		for k, v := range u.baseKeys {
			c := *v
			c.Buckets = append([]uint64(nil), v.Buckets...)
			keys[k] = &c
		}
		for _, sess := range sessions {
			for _, m := range sess.Misses() {
				missed += m
			}
			h, d, err := sess.Counts()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			dropped += d
			if u.item.Key == "" {
				hits += h[0]
				continue
			}
			es, err := sess.Hist()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, e := range es {
				addEntry(keys, e)
			}
		}
		r.Sites, r.Missed, r.Dropped = append(r.Sites, sites), append(r.Missed, missed), r.Dropped+dropped
		r.Unaggregated = append(r.Unaggregated, 0)
		if u.item.Key == "" {
			r.Series = append(r.Series, metric.Series{Family: i, Count: hits})
			continue
		}
		for _, v := range keys {
			v.Family = i
			r.Series = append(r.Series, *v)
		}
	}
	for _, err := range errs {
		fmt.Fprintf(s.stderr, "goprobe: reading the kernel's maps: %v\n", err)
	}
	return r, nil
}

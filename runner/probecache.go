package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/spec"
)

// ProbeCache keeps probe specs by build-id, as perf probe --cache keeps probe
// definitions in the build-id cache: made once where debug info exists
// (goprobe gen --cache), found again for a stripped copy of the same build
// (goprobe trace -x COPY with no --spec). One file per build-id,
// DIR/xx/rest/probes.json, holding every cached probe of that build.
type ProbeCache struct {
	Dir string
}

// ErrNotCached says the cache has no probes for a build-id.
var ErrNotCached = errors.New("no cached probes")

// OpenProbeCache is the probe cache under the cache root (see
// cache.Root): $BINSCOPE_CACHE/probes, else ~/.cache/binscope/probes.
func OpenProbeCache() (*ProbeCache, error) {
	d, err := cache.Root()
	if err != nil {
		return nil, fmt.Errorf("probe cache: %v (set %s)", err, cache.RootEnv)
	}
	return &ProbeCache{Dir: filepath.Join(d, "probes")}, nil
}

func (c *ProbeCache) path(buildID string) (string, error) {
	if len(buildID) < 4 || strings.Trim(buildID, "0123456789abcdef") != "" {
		return "", fmt.Errorf("build-id %q: the cache needs a binary with a GNU or Go build-id note", buildID)
	}
	return filepath.Join(c.Dir, buildID[:2], buildID[2:], "probes.json"), nil
}

// Put adds spec's probes to the build's cached spec; a cached probe with
// the same definition is replaced. It returns the file written.
func (c *ProbeCache) Put(s *spec.Spec) (string, error) {
	p, err := c.path(s.BuildID)
	if err != nil {
		return "", err
	}
	merged := *s
	if old, err := c.Get(s.BuildID); err == nil {
		merged.Probes = nil
		for _, o := range old.Probes {
			if !hasDef(s.Probes, o.Def) {
				merged.Probes = append(merged.Probes, o)
			}
		}
		merged.Probes = append(merged.Probes, s.Probes...)
	} else if !errors.Is(err, ErrNotCached) {
		return "", err
	}
	if err := cache.WriteAtomic(p, func(w io.Writer) error { return spec.WriteSpec(w, &merged) }); err != nil {
		return "", fmt.Errorf("probe cache: %v", err)
	}
	return p, nil
}

func hasDef(ps []spec.Probe, def string) bool {
	for _, p := range ps {
		if p.Def == def {
			return true
		}
	}
	return false
}

// Get returns the cached spec of a build; ErrNotCached when there is none.
func (c *ProbeCache) Get(buildID string) (*spec.Spec, error) {
	p, err := c.path(buildID)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("build-id %s: %w in %s (make them with goprobe gen --cache on a build with debug info)", buildID, ErrNotCached, c.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("probe cache: %w", err)
	}
	defer f.Close()
	s, err := spec.ReadSpec(f, p)
	if err != nil {
		return nil, err
	}
	if s.BuildID != buildID {
		return nil, fmt.Errorf("%s: holds build-id %q, not %q: remove it with goprobe cache remove", p, s.BuildID, buildID)
	}
	return s, nil
}

// CacheEntry is one cached build.
type CacheEntry struct {
	BuildID string
	Binary  string // the path it was made from
	Defs    []string
	Path    string
}

// List returns every cached build, by build-id. An unreadable entry is
// listed with no definitions and its error, not dropped.
func (c *ProbeCache) List() ([]CacheEntry, []error) {
	var out []CacheEntry
	var errs []error
	files, _ := filepath.Glob(filepath.Join(c.Dir, "*", "*", "probes.json"))
	for _, f := range files {
		rest := filepath.Dir(f)
		id := filepath.Base(filepath.Dir(rest)) + filepath.Base(rest)
		e := CacheEntry{BuildID: id, Path: f}
		s, err := c.Get(id)
		if err != nil {
			errs = append(errs, err)
		} else {
			e.Binary = s.Binary
			for _, p := range s.Probes {
				e.Defs = append(e.Defs, p.Def)
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BuildID < out[j].BuildID })
	return out, errs
}

// Remove drops the named probes of a build (every probe when defs is
// empty), and the build's file when none is left.
func (c *ProbeCache) Remove(buildID string, defs []string) error {
	p, err := c.path(buildID)
	if err != nil {
		return err
	}
	if len(defs) == 0 {
		if err := os.Remove(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("build-id %s: %w", buildID, ErrNotCached)
		} else if err != nil {
			return err
		}
		os.Remove(filepath.Dir(p))
		return nil
	}
	s, err := c.Get(buildID)
	if err != nil {
		return err
	}
	if _, err := s.Select(defs); err != nil {
		return err
	}
	var keep []spec.Probe
	for _, pr := range s.Probes {
		if !slices.Contains(defs, pr.Def) {
			keep = append(keep, pr)
		}
	}
	if len(keep) == 0 {
		return c.Remove(buildID, nil)
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	s.Probes = keep
	_, err = c.Put(s)
	return err
}

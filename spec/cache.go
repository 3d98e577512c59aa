package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Cache keeps probe specs by build-id, as perf probe --cache keeps probe
// definitions in the build-id cache: made once where debug info exists
// (goprobe gen --cache), found again for a stripped copy of the same build
// (goprobe trace -x COPY with no --spec). One file per build-id,
// DIR/xx/rest/probes.json, holding every cached probe of that build.
type Cache struct {
	Dir string
}

// ErrNotCached says the cache has no probes for a build-id.
var ErrNotCached = errors.New("no cached probes")

// DefaultCache is the cache under the user's cache directory
// ($XDG_CACHE_HOME/binscope/probes, else ~/.cache/binscope/probes), or
// under $BINSCOPE_CACHE/probes when that is set.
func DefaultCache() (*Cache, error) {
	if d := os.Getenv("BINSCOPE_CACHE"); d != "" {
		return &Cache{Dir: filepath.Join(d, "probes")}, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("probe cache: %v (set BINSCOPE_CACHE)", err)
	}
	return &Cache{Dir: filepath.Join(d, "binscope", "probes")}, nil
}

func (c *Cache) path(buildID string) (string, error) {
	if len(buildID) < 4 || strings.Trim(buildID, "0123456789abcdef") != "" {
		return "", fmt.Errorf("build-id %q: the cache needs a binary with a GNU or Go build-id note", buildID)
	}
	return filepath.Join(c.Dir, buildID[:2], buildID[2:], "probes.json"), nil
}

// Put adds spec's probes to the build's cached spec; a cached probe with
// the same definition is replaced. It returns the file written.
func (c *Cache) Put(spec *Spec) (string, error) {
	p, err := c.path(spec.BuildID)
	if err != nil {
		return "", err
	}
	merged := *spec
	if old, err := c.Get(spec.BuildID); err == nil {
		merged.Probes = nil
		for _, o := range old.Probes {
			if !hasDef(spec.Probes, o.Def) {
				merged.Probes = append(merged.Probes, o)
			}
		}
		merged.Probes = append(merged.Probes, spec.Probes...)
	} else if !errors.Is(err, ErrNotCached) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("probe cache: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".probes-*.json")
	if err != nil {
		return "", fmt.Errorf("probe cache: %v", err)
	}
	defer os.Remove(tmp.Name())
	if err := WriteSpec(tmp, &merged); err != nil {
		tmp.Close()
		return "", fmt.Errorf("probe cache: %s: %v", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("probe cache: %v", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", fmt.Errorf("probe cache: %v", err)
	}
	return p, nil
}

func hasDef(ps []Probe, def string) bool {
	for _, p := range ps {
		if p.Def == def {
			return true
		}
	}
	return false
}

// Get returns the cached spec of a build; ErrNotCached when there is none.
func (c *Cache) Get(buildID string) (*Spec, error) {
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
	s, err := ReadSpec(f, p)
	if err != nil {
		return nil, err
	}
	if s.BuildID != buildID {
		return nil, fmt.Errorf("%s: holds build-id %q, not %q: remove it with goprobe cache remove", p, s.BuildID, buildID)
	}
	return s, nil
}

// Select returns the cached probes whose definitions are defs (all of
// them when defs is empty); a definition not cached is an error naming the
// cached ones.
func (s *Spec) Select(defs []string) (*Spec, error) {
	if len(defs) == 0 {
		return s, nil
	}
	out := *s
	out.Probes = nil
	for _, d := range defs {
		found := false
		for _, p := range s.Probes {
			if p.Def == d {
				out.Probes = append(out.Probes, p)
				found = true
			}
		}
		if !found {
			var have []string
			for _, p := range s.Probes {
				have = append(have, p.Def)
			}
			return nil, fmt.Errorf("probe %q is not cached for build-id %s (cached: %s)", d, s.BuildID, strings.Join(have, "; "))
		}
	}
	return &out, nil
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
func (c *Cache) List() ([]CacheEntry, []error) {
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
func (c *Cache) Remove(buildID string, defs []string) error {
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
	var keep []Probe
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

package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/spec"
)

// CacheOptions say which cache the probe-cache commands use.
type CacheOptions struct {
	// Cache is where specs are kept; nil means OpenProbeCache.
	Cache *ProbeCache
}

func (o *CacheOptions) cache() (*ProbeCache, error) {
	if o != nil && o.Cache != nil {
		return o.Cache, nil
	}
	return OpenProbeCache()
}

// CachePut resolves defs against exe's debug info and keeps the spec in
// the cache under exe's build-id (goprobe gen --cache), saying where on log.
func CachePut(exe string, defs []string, o *CacheOptions, log io.Writer) error {
	c, err := o.cache()
	if err != nil {
		return err
	}
	spec, err := Resolve(exe, defs, log)
	if err != nil {
		return err
	}
	p, err := c.Put(spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "goprobe: %d probes of %s cached for build-id %s in %s\n", len(spec.Probes), exe, spec.BuildID, p)
	return nil
}

// CacheList prints every cached build: its build-id, the file it was made
// from, then its probe definitions indented.
func CacheList(w io.Writer, o *CacheOptions) error {
	c, err := o.cache()
	if err != nil {
		return err
	}
	es, errs := c.List()
	for _, e := range es {
		fmt.Fprintf(w, "%s %s\n", e.BuildID, e.Binary)
		for _, d := range e.Defs {
			fmt.Fprintf(w, "\t%s\n", d)
		}
	}
	return errors.Join(errs...)
}

// CacheRemove drops the cached probes defs (all when none) of a build,
// named by its build-id or by a file of that build.
func CacheRemove(buildIDOrFile string, defs []string, o *CacheOptions) error {
	c, err := o.cache()
	if err != nil {
		return err
	}
	id := buildIDOrFile
	if bid := loader.BuildID(buildIDOrFile); bid != "" {
		id = bid
	}
	return c.Remove(id, defs)
}

// cachedSpec is the spec the cache holds for target's build with exactly
// defs (every cached probe when defs is empty); ok is false when the cache
// has none, or not all of defs.
func (o *Options) cachedSpec(target string, defs []string) (*spec.Spec, bool, error) {
	c, err := OpenProbeCache()
	if err != nil {
		return nil, false, nil
	}
	id := loader.BuildID(target)
	if id == "" {
		return nil, false, nil
	}
	s, err := c.Get(id)
	if errors.Is(err, ErrNotCached) {
		if len(defs) == 0 {
			return nil, false, err
		}
		return nil, false, nil
	}
	if err != nil {
		if len(defs) == 0 {
			return nil, false, err
		}
		// The cache only saves work: resolve the definitions instead.
		if !errors.Is(err, fs.ErrPermission) {
			o.note("%v: resolving the probes from the file instead", err)
		}
		return nil, false, nil
	}
	sel, err := s.Select(defs)
	if err != nil {
		if len(defs) == 0 {
			return nil, false, err
		}
		return nil, false, nil
	}
	o.note("%d probes from the cache: build-id %s, made from %s", len(sel.Probes), id, s.Binary)
	return sel, true, nil
}

package probe

import (
	"fmt"

	"github.com/binscope/binscope/spec"
)

// Missing says what Spec does with a definition that names nothing or
// cannot be probed, as bpftrace's missing_probes: fail (the default),
// warn and go on without it, or go on silently. A run left with no
// probe fails whatever the policy.
type Missing int

const (
	MissingError Missing = iota
	MissingWarn
	MissingIgnore
)

// ParseMissing reads error, warn or ignore.
func ParseMissing(s string) (Missing, error) {
	switch s {
	case "", "error":
		return MissingError, nil
	case "warn":
		return MissingWarn, nil
	case "ignore":
		return MissingIgnore, nil
	}
	return 0, fmt.Errorf("missing-probes %q: want error, warn or ignore", s)
}

// DefaultMaxSites is how many sites the wildcard definitions of one run
// may attach without SpecOptions.MaxSites raised: bpftrace's max_probes.
const DefaultMaxSites = 1024

// SpecOptions tune Spec. A nil *SpecOptions means the defaults.
type SpecOptions struct {
	// MaxSites bounds the sites the wildcard definitions attach, checked
	// before their sites are placed (0: DefaultMaxSites; < 0: no bound).
	MaxSites int
	// Missing is the policy for definitions that cannot be probed.
	Missing Missing
	// Warn receives MissingWarn's warnings, one line each.
	Warn func(string)
}

// SpecWith resolves every definition, a wildcard one into one probe per
// function or USDT probe it names (see naming.Pattern), in the order
// of their names.
func (r *Resolver) SpecWith(defs []*Def, o *SpecOptions) (*spec.Spec, error) {
	var opts SpecOptions
	if o != nil {
		opts = *o
	}
	if opts.MaxSites == 0 {
		opts.MaxSites = DefaultMaxSites
	}
	s := &spec.Spec{Version: spec.SpecVersion, Binary: r.t.path, BuildID: r.t.ef.BuildID, Arch: r.t.arch.Name}
	wildSites := 0
	var firstErr error
	miss := func(err error) error {
		switch {
		case opts.Missing == MissingError:
			return err
		case opts.Missing == MissingWarn && opts.Warn != nil:
			opts.Warn(err.Error())
		}
		if firstErr == nil {
			firstErr = err
		}
		return nil
	}
	for k, d := range defs {
		each, sites, err := r.expandDef(d)
		if err != nil {
			if err = miss(err); err != nil {
				return nil, err
			}
			continue
		}
		if each[0] != d {
			wildSites += sites
			if opts.MaxSites > 0 && wildSites > opts.MaxSites {
				return nil, fmt.Errorf("%s: %s names %d functions or probes with about %d sites, and this run's wildcards more than %d: narrow the pattern, or raise --max-sites", r.t.path, d.Text, len(each), sites, opts.MaxSites)
			}
		}
		for _, e := range each {
			p, err := r.resolveFiltered(e)
			if err != nil {
				if err = miss(err); err != nil {
					return nil, err
				}
				continue
			}
			if each[0] != d {
				p.Wildcard = k + 1
			}
			s.Probes = append(s.Probes, *p)
		}
	}
	if len(s.Probes) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return s, nil
}

// expandDef is d itself, or for a wildcard definition one definition
// per function or USDT probe it names, with an estimate of their sites
// (an out-of-line copy, inline expansions and clones each; a USDT
// probe's places).
func (r *Resolver) expandDef(d *Def) ([]*Def, int, error) {
	if d.USDT != nil {
		return r.notes.expand(d)
	}
	return r.t.expandFuncs(d)
}

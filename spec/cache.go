package spec

import (
	"fmt"
	"strings"
)

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

package session

import (
	"fmt"
	"io"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/uprobe"
)

// proven is the gate every spec passes before it attaches or an artifact
// names its addresses: resolved here, read from a spec file, or taken from
// the cache (made for another copy of the binary, perhaps). Each uprobe
// site is proven against target, the file the probes go to (see package
// uprobe): kept, moved to the next instruction (its Note says so), or
// left out with one line on log. A probe left with no site is an error
// naming its first refused site and why.
func proven(target string, s *spec.Spec, log io.Writer) (*spec.Spec, error) {
	if !hasUprobes(s) {
		return s, nil
	}
	if log == nil {
		log = io.Discard
	}
	ef, err := elfx.Open(target)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	c, err := uprobe.Open(ef)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out, refused := c.Check(s)
	for i, p := range out.Probes {
		if len(p.Sites) == 0 && len(s.Probes[i].Sites) > 0 {
			for _, r := range refused {
				if r.Def == p.Def {
					return nil, fmt.Errorf("%s: %s", target, r)
				}
			}
		}
	}
	for _, r := range refused {
		fmt.Fprintf(log, "goprobe: %s: %s\n", target, r)
	}
	return out, nil
}

func hasUprobes(s *spec.Spec) bool {
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			if site.Kind != spec.SiteTracepoint {
				return true
			}
		}
	}
	return false
}

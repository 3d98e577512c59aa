package runner

import (
	"fmt"
	"io"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/uprobe"
)

// proven is the gate every spec passes before it attaches or an artifact
// names its addresses: resolved here, read from a spec file, or taken from
// the cache (made for another copy of the binary, perhaps). Each uprobe
// site is proven against target, the file the probes go to (see package
// uprobe): kept, moved to the next instruction (its Note says so), or
// left out with one line on log. A probe left with no site is an error
// naming its first refused site and why. m, when not nil, is target's
// model of code that the resolver built from the file alone
// (probe.Resolver.FileModel): the proof reads it instead of building it
// again.
func proven(target string, m *code.Model, s *spec.Spec, log io.Writer) (*spec.Spec, error) {
	return provenWith(target, m, s, log, probe.MissingError)
}

// provenWith is proven with a policy for a probe left with no site: with
// MissingWarn or MissingIgnore it is left out (with a warning on log for
// MissingWarn), as a definition that names nothing is; a spec left with
// no probe is still an error.
func provenWith(target string, m *code.Model, s *spec.Spec, log io.Writer, missing probe.Missing) (*spec.Spec, error) {
	if !hasUprobes(s) {
		return s, nil
	}
	if log == nil {
		log = io.Discard
	}
	c, done, err := proofOf(target, m)
	if err != nil {
		return nil, err
	}
	defer done()
	out, refused := c.Check(s)
	kept := *out
	kept.Probes = nil
	var first error
	for i, p := range out.Probes {
		if len(p.Sites) > 0 || len(s.Probes[i].Sites) == 0 {
			kept.Probes = append(kept.Probes, p)
			continue
		}
		for _, r := range refused {
			if r.Def != p.Def {
				continue
			}
			err := fmt.Errorf("%s: %s", target, r)
			if missing == probe.MissingError {
				return nil, fmt.Errorf("%w (--missing-probes warn leaves such a probe out)", err)
			}
			if missing == probe.MissingWarn {
				fmt.Fprintf(log, "goprobe: warning: %v: the probe is left out\n", err)
			}
			if first == nil {
				first = err
			}
			break
		}
	}
	if len(kept.Probes) == 0 && first != nil {
		return nil, first
	}
	for _, r := range refused {
		fmt.Fprintf(log, "goprobe: %s: %s\n", target, r)
	}
	return &kept, nil
}

// proofOf reads target's code for the proof, from m when it is target's;
// done releases what it opened.
func proofOf(target string, m *code.Model) (c *uprobe.Code, done func(), err error) {
	if m != nil && m.Path == target {
		if c, err = uprobe.OpenModel(m); err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	ef, err := elfx.Open(target)
	if err != nil {
		return nil, nil, err
	}
	if c, err = uprobe.Open(ef); err != nil {
		ef.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); ef.Close() }, nil
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

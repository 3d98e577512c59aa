package attach

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
)

// siteGroup is sites that run one program: with uprobe_multi, one link
// attaches them all, each with its site index as the cookie (dispatched:
// with, above it, the group's index of the site, see bpfprog.Dispatch).
type siteGroup struct {
	probe      int    // the (first) probe of the sites
	prog       string // the program's name in the collection
	sites      []siteRef
	dispatched bool
}

// siteRef is site j of probe i.
type siteRef struct{ i, j int }

// groupSites groups the sites of each probe whose programs have the same
// bpfprog.Identity (with share; else every site is its own group) and
// drops from cs the programs of all but the first site of a group. With
// share, the groups of a probe, or of all the probes one wildcard
// definition was expanded to, then become one, attached by one link,
// whose program tail-calls each site's (dispatched). Tracepoint sites
// stay alone: each is its own link.
func groupSites(cs *ebpf.CollectionSpec, s *spec.Spec, share bool) ([]siteGroup, error) {
	var groups []siteGroup
	for i := 0; i < len(s.Probes); {
		end := i + 1
		if w := s.Probes[i].Wildcard; w != 0 {
			for end < len(s.Probes) && s.Probes[end].Wildcard == w {
				end++
			}
		}
		first := len(groups)
		for ; i < end; i++ {
			gs, err := probeGroups(cs, s, i, share)
			if err != nil {
				return nil, err
			}
			groups = append(groups, gs...)
		}
		if share {
			groups = append(groups[:first], dispatched(cs, s, groups[first:])...)
		}
	}
	return groups, nil
}

// probeGroups groups the sites of probe i by their programs' identity
// (with share), dropping the programs a group's first site's replaces.
func probeGroups(cs *ebpf.CollectionSpec, s *spec.Spec, i int, share bool) ([]siteGroup, error) {
	var groups []siteGroup
	byID := map[string]int{} // identity -> index in groups
	for j, site := range s.Probes[i].Sites {
		name := spec.ProgramName(i, j)
		if prog := cs.Programs[name]; share && prog != nil && site.Kind != spec.SiteTracepoint {
			id, err := bpfprog.Identity(prog)
			if err != nil {
				return nil, err
			}
			if g, ok := byID[id]; ok {
				groups[g].sites = append(groups[g].sites, siteRef{i, j})
				delete(cs.Programs, name)
				continue
			}
			byID[id] = len(groups)
		}
		groups = append(groups, siteGroup{probe: i, prog: name, sites: []siteRef{{i, j}}})
	}
	return groups, nil
}

// dispatched makes the uprobe groups gs (of one probe, or of one
// wildcard's probes) one group when there are several: its program
// (bpfprog.Dispatch) runs each site's by the site's cookie, so that they
// need one link, not one per group. Closing a link waits for the
// kernel's grace period; a probe at 1,000 sites whose arguments differ
// would otherwise wait 1,000 times.
func dispatched(cs *ebpf.CollectionSpec, s *spec.Spec, gs []siteGroup) []siteGroup {
	var out, up []siteGroup
	for _, g := range gs {
		if r := g.sites[0]; s.Probes[r.i].Sites[r.j].Kind == spec.SiteTracepoint || cs.Programs[g.prog] == nil {
			out = append(out, g)
		} else {
			up = append(up, g)
		}
	}
	if len(up) < 2 {
		return gs
	}
	all := siteGroup{probe: up[0].probe, prog: bpfprog.DispatchName(up[0].probe), dispatched: true}
	progOf := map[siteRef]string{}
	for _, g := range up {
		for _, r := range g.sites {
			progOf[r] = g.prog
			all.sites = append(all.sites, r)
		}
	}
	slices.SortFunc(all.sites, func(a, b siteRef) int { return cmp.Or(a.i-b.i, a.j-b.j) })
	progs := make([]string, len(all.sites))
	for k, r := range all.sites {
		progs[k] = progOf[r]
	}
	bpfprog.Dispatch(cs, all.probe, progs, ebpf.AttachTraceUprobeMulti)
	return append(out, all)
}

// attach attaches prog at the group's sites of s in ex: one uprobe_multi
// link with multi, else a perf-event uprobe (a group of one site).
func (g siteGroup) attach(ex *link.Executable, s *spec.Spec, prog *ebpf.Program, pid int, multi bool) (link.Link, error) {
	first := s.Probes[g.sites[0].i].Sites[g.sites[0].j]
	if !multi {
		l, err := ex.Uprobe("", prog, &link.UprobeOptions{Address: first.FileOffset, PID: pid, RefCtrOffset: first.RefCtrOffset})
		if err != nil {
			return nil, fmt.Errorf("at file offset %#x: %w", first.FileOffset, err)
		}
		return l, nil
	}
	mo := &link.UprobeMultiOptions{PID: uint32(pid)}
	refs := false
	for k, r := range g.sites {
		site := s.Probes[r.i].Sites[r.j]
		cookie := uint64(r.j)
		if g.dispatched {
			cookie |= uint64(k) << 32
		}
		mo.Addresses = append(mo.Addresses, site.FileOffset)
		mo.Cookies = append(mo.Cookies, cookie)
		mo.RefCtrOffsets = append(mo.RefCtrOffsets, site.RefCtrOffset)
		refs = refs || site.RefCtrOffset != 0
	}
	if !refs {
		mo.RefCtrOffsets = nil
	}
	l, err := ex.UprobeMulti(nil, prog, mo)
	if err != nil {
		if len(g.sites) == 1 {
			return nil, fmt.Errorf("at file offset %#x: %w", first.FileOffset, err)
		}
		return nil, fmt.Errorf("at %d sites, the first at file offset %#x: %w", len(g.sites), first.FileOffset, err)
	}
	return l, nil
}

// closeLinks closes links at once: closing a uprobe link waits for the
// kernel's grace period (tens of milliseconds), and concurrent closes
// share their waits.
func closeLinks(links []link.Link) {
	var wg sync.WaitGroup
	busy := make(chan struct{}, 256) // a thread each while it waits
	for _, l := range links {
		busy <- struct{}{}
		wg.Go(func() {
			l.Close()
			<-busy
		})
	}
	wg.Wait()
}

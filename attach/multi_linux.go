package attach

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
)

// siteGroup is sites of one probe that run one program: with uprobe_multi,
// one link attaches them all, each with its site index as the cookie.
type siteGroup struct {
	probe int
	prog  string // the program's name in the collection
	sites []int  // indexes into the probe's Sites
}

// groupSites groups the sites of each probe whose programs have the same
// bpfprog.Identity (with share; else every site is its own group) and
// drops from cs the programs of all but the first site of a group. With
// share, the groups of a probe then become one, attached by one link,
// whose program tail-calls each site's (dispatched). Tracepoint sites
// stay alone: each is its own link.
func groupSites(cs *ebpf.CollectionSpec, s *spec.Spec, share bool) ([]siteGroup, error) {
	var groups []siteGroup
	for i, p := range s.Probes {
		first := len(groups)
		byID := map[string]int{} // identity -> index in groups
		for j, site := range p.Sites {
			name := spec.ProgramName(i, j)
			if prog := cs.Programs[name]; share && prog != nil && site.Kind != spec.SiteTracepoint {
				id, err := bpfprog.Identity(prog)
				if err != nil {
					return nil, err
				}
				if g, ok := byID[id]; ok {
					groups[g].sites = append(groups[g].sites, j)
					delete(cs.Programs, name)
					continue
				}
				byID[id] = len(groups)
			}
			groups = append(groups, siteGroup{probe: i, prog: name, sites: []int{j}})
		}
		if share {
			groups = append(groups[:first], dispatched(cs, p, i, groups[first:])...)
		}
	}
	return groups, nil
}

// dispatched makes the uprobe groups gs of probe p (index i) one group
// when there are several: its program (bpfprog.Dispatch) runs each site's
// by the site's cookie, so that the probe needs one link, not one per
// group. Closing a link waits for the kernel's grace period; a probe at
// 1,000 sites whose arguments differ would otherwise wait 1,000 times.
func dispatched(cs *ebpf.CollectionSpec, p spec.Probe, i int, gs []siteGroup) []siteGroup {
	var out, up []siteGroup
	for _, g := range gs {
		if p.Sites[g.sites[0]].Kind == spec.SiteTracepoint || cs.Programs[g.prog] == nil {
			out = append(out, g)
		} else {
			up = append(up, g)
		}
	}
	if len(up) < 2 {
		return gs
	}
	all := siteGroup{probe: i, prog: bpfprog.DispatchName(i)}
	progs := map[int]string{}
	for _, g := range up {
		for _, j := range g.sites {
			progs[j] = g.prog
			all.sites = append(all.sites, j)
		}
	}
	slices.Sort(all.sites)
	bpfprog.Dispatch(cs, i, progs, ebpf.AttachTraceUprobeMulti)
	return append(out, all)
}

// attach attaches prog at the group's sites of p in ex: one uprobe_multi
// link with multi, else a perf-event uprobe (a group of one site).
func (g siteGroup) attach(ex *link.Executable, p spec.Probe, prog *ebpf.Program, pid int, multi bool) (link.Link, error) {
	first := p.Sites[g.sites[0]]
	if !multi {
		l, err := ex.Uprobe("", prog, &link.UprobeOptions{Address: first.FileOffset, PID: pid, RefCtrOffset: first.RefCtrOffset})
		if err != nil {
			return nil, fmt.Errorf("at file offset %#x: %w", first.FileOffset, err)
		}
		return l, nil
	}
	mo := &link.UprobeMultiOptions{PID: uint32(pid)}
	refs := false
	for _, j := range g.sites {
		site := p.Sites[j]
		mo.Addresses = append(mo.Addresses, site.FileOffset)
		mo.Cookies = append(mo.Cookies, uint64(j))
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

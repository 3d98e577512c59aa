package probe_test

import (
	"testing"

	"github.com/binscope/binscope/probe"
)

// TestEventsWithoutArgs: a trace of a definition without arguments sends
// an event per hit (one line per call); a count sends none.
func TestEventsWithoutArgs(t *testing.T) {
	s := &probe.Spec{Arch: "x86_64", Probes: []probe.Probe{{Def: "f", Function: "f",
		Sites: []probe.Site{{Kind: probe.SiteEntry, Function: "f", Addr: 0x1000, FileOffset: 0x1000}}}}}
	for _, events := range []bool{false, true} {
		cs, err := probe.Programs(s, &probe.ProgramOptions{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		_, hasMap := cs.Maps["events"]
		refs := false
		for _, ins := range cs.Programs[probe.ProgramName(0, 0)].Instructions {
			refs = refs || ins.Reference() == "events"
		}
		if hasMap != events || refs != events {
			t.Errorf("Events=%v: events map %v, program sends events %v", events, hasMap, refs)
		}
	}
}

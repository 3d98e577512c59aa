package bpfprog_test

import (
	"testing"

	"github.com/binscope/binscope/bpfprog"
	"github.com/binscope/binscope/spec"
)

// TestEventsWithoutArgs: a trace of a definition without arguments sends
// an event per hit (one line per call); a count sends none.
func TestEventsWithoutArgs(t *testing.T) {
	s := &spec.Spec{Arch: "x86_64", Probes: []spec.Probe{{Def: "f", Function: "f",
		Sites: []spec.Site{{Kind: spec.SiteEntry, Function: "f", Addr: 0x1000, FileOffset: 0x1000}}}}}
	for _, events := range []bool{false, true} {
		cs, err := bpfprog.Programs(s, &bpfprog.ProgramOptions{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		_, hasMap := cs.Maps["events"]
		refs := false
		for _, ins := range cs.Programs[spec.ProgramName(0, 0)].Instructions {
			refs = refs || ins.Reference() == "events"
		}
		if hasMap != events || refs != events {
			t.Errorf("Events=%v: events map %v, program sends events %v", events, hasMap, refs)
		}
	}
}

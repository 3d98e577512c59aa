package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// TestProfilePprof: go tool pprof reads goprobe profile --pprof's file of
// a CPU-bound C program whose loop runs two inlined functions (step in
// mix in work): its top function and that function's share are goprobe's
// own top table's; -traces shows the inline frames; the profile places
// user addresses in the program's mapping with its build-id, and kernel
// frames in the [kernel] mapping.
func TestProfilePprof(t *testing.T) {
	needBPF(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		testutil.Skipf(t, "go not on PATH: %v", err)
	}
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	bin := buildWith(t, dir, "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "BIN", filepath.Join(dir, "inline.c"))
	pb := filepath.Join(t.TempDir(), "cpu.pb.gz")
	code, out, errs := runGoprobe("profile", "-F", "499", "--top", "3", "--pprof", pb, "--", bin, "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// goprobe's table: SELF% SELF TOTAL% TOTAL FUNCTION [module]
	var ourName, ourShare string
	for _, l := range strings.Split(out, "\n") {
		if fs := strings.Fields(l); len(fs) >= 5 && strings.HasSuffix(fs[0], "%") && fs[0] != "SELF%" {
			ourName, ourShare = fs[4], fs[0]
			break
		}
	}
	if ourName != "step" {
		t.Errorf("goprobe's top function is %q, want step (inlined into mix, into work):\n%s", ourName, out)
	}

	top, err := exec.Command(gobin, "tool", "pprof", "-top", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, top)
	}
	// flat flat% sum% cum cum% NAME [(inline)]
	var theirName, theirShare string
	rows := false
	for _, l := range strings.Split(string(top), "\n") {
		fs := strings.Fields(l)
		if len(fs) >= 2 && fs[0] == "flat" {
			rows = true
			continue
		}
		if rows && len(fs) >= 6 {
			theirName, theirShare = fs[5], fs[1]
			break
		}
	}
	if theirName != ourName || theirShare != ourShare {
		t.Errorf("go tool pprof's top is %s at %s, goprobe's %s at %s:\n%s\n%s", theirName, theirShare, ourName, ourShare, top, out)
	}

	traces, err := exec.Command(gobin, "tool", "pprof", "-traces", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -traces: %v\n%s", err, traces)
	}
	if !strings.Contains(string(traces), "step (inline)") || !strings.Contains(string(traces), "mix (inline)") {
		t.Errorf("-traces shows no inline frames:\n%s", traces)
	}

	p := testutil.ReadProfile(t, pb)
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var mapped, inline bool
	for _, m := range p.Mapping {
		if m.File == bin && m.BuildID == ef.BuildID && m.HasInlineFrames && m.HasLineNumbers {
			mapped = true
		}
	}
	for _, loc := range p.Location {
		if len(loc.Line) >= 3 && loc.Line[0].Function.Name == "step" && loc.Line[1].Function.Name == "mix" &&
			loc.Line[2].Function.Name == "work" && strings.HasSuffix(loc.Line[0].Function.Filename, "inline.c") && loc.Line[0].Line > 0 {
			inline = true
		}
		for _, l := range loc.Line {
			if loc.Mapping.File == "[kernel]" && l.Function.Filename != "" {
				t.Errorf("kernel frame %s with a file", l.Function.Name)
			}
		}
	}
	if !mapped || !inline {
		t.Errorf("mapping of %s with build-id %s: %v; a location with step, mix, work as its Lines: %v", bin, ef.BuildID, mapped, inline)
	}
	if p.Period == 0 || len(p.SampleType) != 2 || p.SampleType[1].Unit != "nanoseconds" {
		t.Errorf("period %d, sample types %v", p.Period, p.SampleType)
	}
}

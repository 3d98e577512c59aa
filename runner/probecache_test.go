package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/spec"
)

func TestProbeCache(t *testing.T) {
	c := &ProbeCache{Dir: t.TempDir()}
	const id = "0123456789abcdef"
	one := &spec.Spec{Version: spec.SpecVersion, Binary: "/bin/app", BuildID: id, Probes: []spec.Probe{{Def: "main.f"}, {Def: "main.g x"}}}
	if _, err := c.Get(id); !errors.Is(err, ErrNotCached) {
		t.Fatalf("empty cache: %v", err)
	}
	if _, err := c.Put(one); err != nil {
		t.Fatal(err)
	}
	two := &spec.Spec{Version: spec.SpecVersion, Binary: "/bin/app", BuildID: id, Probes: []spec.Probe{{Def: "main.g x", Function: "new"}, {Def: "main.h"}}}
	p, err := c.Put(two)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	var defs []string
	for _, pr := range got.Probes {
		defs = append(defs, pr.Def)
		if pr.Def == "main.g x" && pr.Function != "new" {
			t.Errorf("a probe put again must replace the cached one")
		}
	}
	if len(defs) != 3 {
		t.Fatalf("cached %v, want main.f, main.g x, main.h", defs)
	}
	if s, err := got.Select([]string{"main.h"}); err != nil || len(s.Probes) != 1 {
		t.Errorf("Select(main.h) = %v, %v", s, err)
	}
	if _, err := got.Select([]string{"main.nope"}); err == nil {
		t.Errorf("Select of an uncached definition must fail")
	}
	if l, errs := c.List(); len(errs) != 0 || len(l) != 1 || l[0].BuildID != id || len(l[0].Defs) != 3 {
		t.Errorf("List = %+v, %v", l, errs)
	}
	if err := c.Remove(id, []string{"main.f", "main.h"}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(id); err != nil || len(got.Probes) != 1 || got.Probes[0].Def != "main.g x" {
		t.Fatalf("after removing two: %+v, %v", got, err)
	}
	if err := c.Remove(id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left behind", p)
	}
	// A damaged entry is an error naming it, listed, never trusted.
	if _, err := c.Put(one); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{\"version\": 1, \"build_id\": \"ffff\""), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(id); err == nil {
		t.Errorf("a damaged entry was read")
	}
	if l, errs := c.List(); len(l) != 1 || len(errs) != 1 {
		t.Errorf("List of a damaged entry = %+v, %v", l, errs)
	}
	if _, err := c.Put(&spec.Spec{BuildID: "../../etc"}); err == nil || filepath.IsAbs(err.Error()) {
		t.Errorf("a build-id that is not hex must be refused: %v", err)
	}
}

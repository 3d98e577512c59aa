package spec

import (
	"strings"
	"testing"
)

// TestSameShape: a program of one build serves another whose sites read
// the same fields through the same registers, whatever their addresses
// and the offsets the program relocates; a fixed offset (a stack slot) or
// a register that differs refuses it.
func TestSameShape(t *testing.T) {
	build := func(addr uint64, relocated, fixed int64, reg string) *Spec {
		return &Spec{Version: SpecVersion, Binary: "b", BuildID: "id", Arch: "x86_64", Probes: []Probe{{
			Def: "f c->n", Function: "f", Lang: "go",
			Sites: []Site{{Kind: SiteEntry, Function: "f", Addr: addr, FileOffset: addr - 0x400000, Args: []Fetch{
				{Name: "c->n", Type: "u64", Size: 8, Chains: []Chain{{Reg: reg, Derefs: []int64{fixed, relocated},
					Access: []Access{{}, {Type: "main.T", Fields: []string{"n"}}}}}},
			}}},
		}}}
	}
	shape, err := Shape(build(0x401000, 8, -16, "RAX"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseShape(shape)
	if err != nil {
		t.Fatal(err)
	}
	if err := SameShape(want, build(0x402000, 16, -16, "RAX")); err != nil {
		t.Errorf("another address and relocated offset: %v", err)
	}
	for _, tc := range []struct {
		name   string
		target *Spec
		says   string
	}{
		{"fixed offset", build(0x401000, 8, -24, "RAX"), "site 0"},
		{"register", build(0x401000, 8, -16, "RBX"), "site 0"},
	} {
		err := SameShape(want, tc.target)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	two := build(0x401000, 8, -16, "RAX")
	two.Probes[0].Sites = append(two.Probes[0].Sites, two.Probes[0].Sites[0])
	if err := SameShape(want, two); err == nil || !strings.Contains(err.Error(), "2 in the target") {
		t.Errorf("another site count: %v", err)
	}
}

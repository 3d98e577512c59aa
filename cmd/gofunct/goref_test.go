package main

import (
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

const promPkg = "github.com/prometheus/client_golang/prometheus."

// TestGoRefPrototypes: gofunct --locations prints on a build without DWARF (its
// parameters from a reference build, package goref) exactly what it
// prints on the same program built with it.
func TestGoRefPrototypes(t *testing.T) {
	for _, pair := range [][2]string{{"go-prom", "go-prom-stripped"}, {"go-prom-v111", "go-prom-v111-stripped"}} {
		withDWARF, stripped := testutil.Fixture(t, pair[0]).Path, testutil.Fixture(t, pair[1]).Path
		for _, fn := range []string{"(*counter).Add", "(*gauge).Set", "(*Desc).String", "(*Registry).Register"} {
			c1, w1, e1 := runGofunct("--locations", "-f", promPkg+fn, withDWARF)
			c2, w2, e2 := runGofunct("--locations", "-f", promPkg+fn, stripped)
			if c1 != 0 || c2 != 0 || w1 != w2 {
				t.Errorf("%s gofunct --locations %s: without DWARF (%d) %q %s, with DWARF (%d) %q %s", pair[1], fn, c2, w2, e2, c1, w1, e1)
			}
		}
	}
}
